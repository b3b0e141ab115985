//! What ModelStructure declares about the outputs' dependencies on inputs, and the
//! canGetAndSetFMUstate flag of the Co-Simulation interface in the spelling of its version:
//! what the FMU-only master (`stiction-fmi-master`) reads for Gauss-Seidel ordering and
//! algebraic loops, beyond [`ModelDescription`].

use crate::description::ModelDescription;
use crate::vocab::FmiVersion;
use std::collections::HashMap;

/// What ModelStructure declares about one output's dependencies.
#[derive(Clone, Debug, PartialEq)]
pub enum Deps {
    /// No `dependencies` attribute.
    Unknown,
    /// The variables (indices into `ModelDescription::variables`) it depends on.
    On(Vec<usize>),
}

/// The parts of modelDescription.xml the FMU-only master needs beyond [`ModelDescription`]:
/// canGetAndSetFMUstate of the Co-Simulation interface and the outputs' dependencies.
#[derive(Clone, Debug, Default)]
pub struct Structure {
    pub can_get_and_set_state: bool,
    pub deps: HashMap<usize, Deps>,
}

pub fn read_structure(text: &str, md: &ModelDescription) -> std::result::Result<Structure, String> {
    // `md` was parsed from `text`, so the depth was checked there.
    let doc = crate::xml::Document::parse(text, u32::MAX).map_err(|e| format!("XML error: {e}"))?;
    let root = doc.root_element();
    let attr = match md.version {
        FmiVersion::V2 => "canGetAndSetFMUstate",
        FmiVersion::V3 => "canGetAndSetFMUState",
    };
    let can_get_and_set_state = root
        .children()
        .find(|n| n.has_tag_name("CoSimulation"))
        .and_then(|n| n.attribute(attr))
        .is_some_and(|v| v.trim() == "true");
    let mut deps = HashMap::new();
    // FMI 2.0 names variables by their 1-based position in ModelVariables (ModelDescription
    // keeps every ScalarVariable in that order), FMI 3.0 by value reference.
    let by_index = |s: &str| s.parse::<usize>().ok().and_then(|i| i.checked_sub(1)).filter(|&i| i < md.variables.len());
    let vr_index = md.vr_index();
    let by_vr = |s: &str| s.parse::<u32>().ok().and_then(|vr| vr_index.get(&vr).copied());
    let resolve: &dyn Fn(&str) -> Option<usize> = match md.version {
        FmiVersion::V2 => &by_index,
        FmiVersion::V3 => &by_vr,
    };
    if let Some(st) = root.children().find(|n| n.has_tag_name("ModelStructure")) {
        let entries: Vec<(crate::xml::Node, &str)> = match md.version {
            FmiVersion::V2 => st
                .children()
                .filter(|n| n.has_tag_name("Outputs"))
                .flat_map(|o| o.children().filter(|n| n.has_tag_name("Unknown")))
                .map(|u| (u, "index"))
                .collect(),
            FmiVersion::V3 => {
                st.children().filter(|n| n.has_tag_name("Output")).map(|u| (u, "valueReference")).collect()
            }
        };
        for (node, key) in entries {
            let Some(out) = node.attribute(key).and_then(|s| resolve(s.trim())) else { continue };
            let d = match node.attribute("dependencies") {
                None => Deps::Unknown,
                Some(list) => {
                    let mut on = Vec::new();
                    for tok in list.split_whitespace() {
                        match resolve(tok) {
                            Some(i) => on.push(i),
                            None => {
                                return Err(format!(
                                    "ModelStructure: the dependencies of output '{}' name an unknown variable ({tok})",
                                    md.variables[out].name
                                ))
                            }
                        }
                    }
                    Deps::On(on)
                }
            };
            deps.insert(out, d);
        }
    }
    Ok(Structure { can_get_and_set_state, deps })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dependencies_are_read_from_model_structure() {
        let text = r#"<fmiModelDescription fmiVersion="2.0" modelName="M" guid="g">
  <CoSimulation modelIdentifier="M" canGetAndSetFMUstate="true"/>
  <ModelVariables>
    <ScalarVariable name="u" valueReference="1" causality="input"><Real start="0"/></ScalarVariable>
    <ScalarVariable name="y" valueReference="2" causality="output"><Real/></ScalarVariable>
    <ScalarVariable name="z" valueReference="3" causality="output"><Real/></ScalarVariable>
    <ScalarVariable name="w" valueReference="4" causality="output"><Real/></ScalarVariable>
  </ModelVariables>
  <ModelStructure><Outputs><Unknown index="2" dependencies="1"/><Unknown index="3" dependencies=""/><Unknown index="4"/></Outputs></ModelStructure>
</fmiModelDescription>"#;
        let md = ModelDescription::parse(text).unwrap();
        let s = read_structure(text, &md).unwrap();
        assert!(s.can_get_and_set_state);
        assert_eq!(s.deps[&1], Deps::On(vec![0]));
        assert_eq!(s.deps[&2], Deps::On(vec![]));
        assert_eq!(s.deps[&3], Deps::Unknown);
        let bad = text.replace("dependencies=\"1\"", "dependencies=\"9\"");
        assert!(read_structure(&bad, &md).unwrap_err().contains("unknown variable (9)"));
    }
}
