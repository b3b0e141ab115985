//! Units of signals and parameters, once: every unit symbol a component declares
//! ([`crate::component::SignalInfo::unit`], [`crate::system::ParamDoc::unit`]) with its
//! physical quantity (Modelica.SIunits' names, as FMI tools show them) and its exponents of
//! the SI base units in the form of FMI 2.0's `<BaseUnit>` (FMI 2.0 §2.2.2; FMI 3.0 §2.4.3:
//! kg, m, s, A, K, mol, cd, rad, factor 1, offset 0 for every unit here).
//!
//! Result files label a column `q [m]` with [`column_label`] (`stiction run --units header`,
//! the .mat file's descriptions); an exported FMU's `<UnitDefinitions>` can be written from
//! [`Unit::base`].

/// Exponents of the SI base units (and the radian, which FMI counts as a base unit).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BaseUnits {
    pub kg: i8,
    pub m: i8,
    pub s: i8,
    pub a: i8,
    pub k: i8,
    pub mol: i8,
    pub cd: i8,
    pub rad: i8,
}

/// One unit symbol as components write it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Unit {
    /// The symbol components declare, e.g. `N·m/rad` (UTF-8: `·`, `²`).
    pub symbol: &'static str,
    /// The physical quantity, e.g. `RotationalSpringConstant`.
    pub quantity: &'static str,
    /// The unit in SI base units.
    pub base: BaseUnits,
}

const fn b(kg: i8, m: i8, s: i8, rad: i8) -> BaseUnits {
    BaseUnits { kg, m, s, a: 0, k: 0, mol: 0, cd: 0, rad }
}

/// Every unit the component types declare (tests/units.rs of the root package checks that
/// each unit of the registry's parameter and signal tables is here).
pub const UNITS: &[Unit] = &[
    Unit { symbol: "s", quantity: "Time", base: b(0, 0, 1, 0) },
    Unit { symbol: "m", quantity: "Length", base: b(0, 1, 0, 0) },
    Unit { symbol: "m/s", quantity: "Velocity", base: b(0, 1, -1, 0) },
    Unit { symbol: "m/s²", quantity: "Acceleration", base: b(0, 1, -2, 0) },
    Unit { symbol: "rad", quantity: "Angle", base: b(0, 0, 0, 1) },
    Unit { symbol: "rad/s", quantity: "AngularVelocity", base: b(0, 0, -1, 1) },
    Unit { symbol: "rad/s²", quantity: "AngularAcceleration", base: b(0, 0, -2, 1) },
    Unit { symbol: "kg", quantity: "Mass", base: b(1, 0, 0, 0) },
    Unit { symbol: "kg·m²", quantity: "MomentOfInertia", base: b(1, 2, 0, 0) },
    Unit { symbol: "N", quantity: "Force", base: b(1, 1, -2, 0) },
    Unit { symbol: "N·m", quantity: "Torque", base: b(1, 2, -2, 0) },
    Unit { symbol: "N·s", quantity: "Impulse", base: b(1, 1, -1, 0) },
    Unit { symbol: "N·m·s", quantity: "AngularMomentum", base: b(1, 2, -1, 0) },
    Unit { symbol: "N/m", quantity: "TranslationalSpringConstant", base: b(1, 0, -2, 0) },
    Unit { symbol: "N·s/m", quantity: "TranslationalDampingConstant", base: b(1, 0, -1, 0) },
    Unit { symbol: "N·m/rad", quantity: "RotationalSpringConstant", base: b(1, 2, -2, -1) },
    Unit { symbol: "N·m·s/rad", quantity: "RotationalDampingConstant", base: b(1, 2, -1, -1) },
    Unit { symbol: "J", quantity: "Energy", base: b(1, 2, -2, 0) },
    Unit { symbol: "W", quantity: "Power", base: b(1, 2, -3, 0) },
];

/// The unit of `symbol`, or None for an empty symbol (a flag, a count, a raw state) or one
/// no component declares.
pub fn unit(symbol: &str) -> Option<&'static Unit> {
    UNITS.iter().find(|u| u.symbol == symbol)
}

/// The rotational counterpart of a translational unit, for a 1-D component written in
/// translational units that acts on a rotation (a spring on a shaft: N → N·m, m → rad);
/// other units as they are.
pub fn rotational(symbol: &'static str) -> &'static str {
    match symbol {
        "m" => "rad",
        "m/s" => "rad/s",
        "m/s²" => "rad/s²",
        "N" => "N·m",
        "N·s" => "N·m·s",
        "kg" => "kg·m²",
        "N/m" => "N·m/rad",
        "N·s/m" => "N·m·s/rad",
        other => other,
    }
}

/// A column's label with its unit, as FMI tools' CSV headers and plots write it: `q [m]`;
/// the label alone when the unit is empty.
pub fn column_label(label: &str, unit: &str) -> String {
    if unit.is_empty() {
        label.to_string()
    } else {
        format!("{label} [{unit}]")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symbols_are_unique_and_quantities_consistent() {
        for (i, u) in UNITS.iter().enumerate() {
            assert!(UNITS[..i].iter().all(|o| o.symbol != u.symbol), "{} twice", u.symbol);
        }
        // N = kg·m/s², N·m = N times m, N/m = N over m, ...
        let n = unit("N").unwrap().base;
        assert_eq!(n, BaseUnits { kg: 1, m: 1, s: -2, ..Default::default() });
        assert_eq!(unit("N·m").unwrap().base, BaseUnits { m: 2, ..n });
        assert_eq!(unit("N/m").unwrap().base, BaseUnits { m: 0, ..n });
        assert_eq!(unit("N·s/m").unwrap().base, BaseUnits { m: 0, s: -1, ..n });
        assert_eq!(unit("J").unwrap().base, unit("N·m").unwrap().base);
        assert_eq!(unit(""), None);
    }

    #[test]
    fn labels() {
        assert_eq!(column_label("q", "rad"), "q [rad]");
        assert_eq!(column_label("stuck", ""), "stuck");
    }
}
