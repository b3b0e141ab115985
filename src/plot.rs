//! `--plot`: output columns against time (PNG or SVG by extension): one panel per column,
//! or one shared panel with `--plot-overlay`; `--plot-signals a,b` chooses the columns.
//! Every y axis names its unit; ticks are printed at their own precision (no `-0.0`).

use plotters::coord::Shift;
use plotters::prelude::*;
use std::path::Path;
use std::sync::OnceLock;
use stiction_framework::Recorder;

/// The font family the plots use; [`register_font`] gives it the embedded DejaVu Sans.
const FONT: &str = "sans-serif";

/// What to draw besides the columns themselves.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Only these columns, in this order (empty: all).
    pub signals: Vec<String>,
    /// All chosen columns on one shared axis.
    pub overlay: bool,
    /// (label, unit) of the columns ("" for none).
    pub units: Vec<(String, String)>,
}

impl Options {
    /// The chosen columns: indices into `labels`, or an error naming an unknown one.
    pub fn columns(&self, labels: &[String]) -> anyhow::Result<Vec<usize>> {
        if self.signals.is_empty() {
            return Ok((0..labels.len()).collect());
        }
        self.signals
            .iter()
            .map(|s| {
                labels.iter().position(|l| l == s).ok_or_else(|| {
                    let hint = stiction::set::suggestion(s, labels.iter().map(String::as_str));
                    anyhow::anyhow!("--plot-signals: no output column '{s}'{hint} (columns: {})", labels.join(", "))
                })
            })
            .collect()
    }

    fn unit(&self, label: &str) -> &str {
        self.units.iter().find(|(l, _)| l == label).map(|(_, u)| u.as_str()).unwrap_or("")
    }
}

pub fn plot(rec: &Recorder, title: &str, path: &Path, opts: &Options) -> anyhow::Result<()> {
    register_font()?;
    let cols = opts.columns(&rec.labels)?;
    let panels = if opts.overlay { 1 } else { cols.len().max(1) };
    let size = (1000, 40 + if opts.overlay { 500 } else { 220 * panels as u32 });
    let svg = path.extension().is_some_and(|e| e.eq_ignore_ascii_case("svg"));
    // Drawn into a temporary file beside `path`, renamed onto it when whole (stiction::outfile).
    let out = stiction::outfile::OutFile::create(path).map_err(|e| anyhow::anyhow!(e))?;
    let partial = out.partial_path().to_path_buf();
    if svg {
        let root = SVGBackend::new(&partial, size).into_drawing_area();
        draw(rec, title, &root, &cols, opts)?;
        root.present()?;
    } else {
        let root = BitMapBackend::new(&partial, size).into_drawing_area();
        draw(rec, title, &root, &cols, opts)?;
        root.present()?;
    }
    out.commit().map_err(|e| anyhow::anyhow!(e))
}

/// A tick value at the precision the axis step needs: no float noise, no `-0`.
pub fn tick(v: f64, step: f64) -> String {
    let decimals = if step > 0.0 && step.is_finite() { (-step.log10().floor()).max(0.0) as usize + 1 } else { 3 };
    let decimals = decimals.min(12);
    let s = format!("{v:.decimals$}");
    let s = if s.contains('.') { s.trim_end_matches('0').trim_end_matches('.').to_string() } else { s };
    if s.trim_start_matches('-').chars().all(|c| c == '0' || c == '.') {
        "0".into()
    } else {
        s
    }
}

/// Range of the finite values of `cols` (padded; a flat line gets a small band).
fn range(rec: &Recorder, cols: &[usize]) -> (f64, f64) {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for r in &rec.rows {
        for &c in cols {
            if r[c].is_finite() {
                lo = lo.min(r[c]);
                hi = hi.max(r[c]);
            }
        }
    }
    if !lo.is_finite() {
        (lo, hi) = (-1.0, 1.0);
    }
    if hi - lo < 1e-12 * (1.0 + hi.abs()) {
        lo -= 0.5 * (1.0 + lo.abs()) * 1e-3;
        hi += 0.5 * (1.0 + hi.abs()) * 1e-3;
    }
    let pad = 0.05 * (hi - lo);
    (lo - pad, hi + pad)
}

fn err<E: std::fmt::Display>(e: E) -> anyhow::Error {
    anyhow::anyhow!("{e}")
}

const COLORS: [RGBColor; 6] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
    RGBColor(255, 127, 14),
    RGBColor(23, 190, 207),
];

fn draw<DB: DrawingBackend>(
    rec: &Recorder,
    title: &str,
    root: &DrawingArea<DB, Shift>,
    cols: &[usize],
    opts: &Options,
) -> anyhow::Result<()>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE).map_err(err)?;
    let root = root.titled(title, (FONT, 22)).map_err(err)?;
    let (t0, t1) = (rec.time.first().copied().unwrap_or(0.0), rec.time.last().copied().unwrap_or(1.0));
    let t1 = t1.max(t0 + 1e-12);
    let groups: Vec<Vec<usize>> =
        if opts.overlay { vec![cols.to_vec()] } else { cols.iter().map(|&c| vec![c]).collect() };
    let panels = root.split_evenly((groups.len().max(1), 1));
    for (group, area) in groups.iter().zip(panels.iter()) {
        let (lo, hi) = range(rec, group);
        // The y label: "label [unit]", or for a shared axis the units of its columns.
        let ylabel = if group.len() == 1 {
            let l = &rec.labels[group[0]];
            match opts.unit(l) {
                "" => format!("{l} [-]"),
                u => format!("{l} [{u}]"),
            }
        } else {
            let mut units: Vec<&str> =
                group.iter().map(|&c| opts.unit(&rec.labels[c])).map(|u| if u.is_empty() { "-" } else { u }).collect();
            units.dedup();
            format!("[{}]", units.join(", "))
        };
        let mut chart = ChartBuilder::on(area)
            .margin(8)
            .x_label_area_size(30)
            .y_label_area_size(80)
            .build_cartesian_2d(t0..t1, lo..hi)
            .map_err(err)?;
        let (xs, ys) = ((t1 - t0) / 10.0, (hi - lo) / 10.0);
        chart
            .configure_mesh()
            .x_desc("t [s]")
            .y_desc(ylabel)
            .x_label_formatter(&|v| tick(*v, xs))
            .y_label_formatter(&|v| tick(*v, ys))
            .draw()
            .map_err(err)?;
        for (k, &c) in group.iter().enumerate() {
            let color = COLORS[k % COLORS.len()];
            let series = chart
                .draw_series(LineSeries::new(rec.time.iter().zip(&rec.rows).map(|(t, r)| (*t, r[c])), &color))
                .map_err(err)?;
            if group.len() > 1 {
                series
                    .label(rec.labels[c].as_str())
                    .legend(move |(x, y)| PathElement::new([(x, y), (x + 16, y)], color));
            }
        }
        if group.len() > 1 {
            chart
                .configure_series_labels()
                .background_style(WHITE.mix(0.8))
                .border_style(BLACK)
                .label_font((FONT, 14))
                .draw()
                .map_err(err)?;
        }
    }
    Ok(())
}

/// Registers DejaVu Sans (in the binary, no system fonts) as [`FONT`], once per process.
/// Other styles fall back to the regular face.
fn register_font() -> anyhow::Result<()> {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    let ok = *REGISTERED
        .get_or_init(|| plotters::style::register_font(FONT, FontStyle::Normal, dejavu::sans::regular()).is_ok());
    anyhow::ensure!(ok, "the embedded DejaVu Sans font could not be loaded");
    Ok(())
}

/// Check, before a run, that `path` names a plot this build can draw (.png or .svg) in a
/// directory that exists.
pub fn check_path(path: &Path) -> anyhow::Result<()> {
    match path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase).as_deref() {
        Some("png" | "svg") => {}
        other => anyhow::bail!(
            "--plot {}: plots are written as .png or .svg, not {}",
            path.display(),
            other.map(|e| format!(".{e}")).unwrap_or_else(|| "a file without extension".into())
        ),
    }
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        anyhow::ensure!(dir.is_dir(), "--plot {}: the directory {} does not exist", path.display(), dir.display());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::tick;

    #[test]
    fn ticks_are_clean() {
        assert_eq!(tick(-0.0000000001, 0.1), "0");
        assert_eq!(tick(-0.0, 1.0), "0");
        assert_eq!(tick(0.30000000000000004, 0.1), "0.3");
        assert_eq!(tick(1.25, 0.05), "1.25");
        assert_eq!(tick(200.0, 50.0), "200");
        assert_eq!(tick(-2.5e-4, 1e-4), "-0.00025");
    }
}
