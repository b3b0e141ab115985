//! `--plot`: every output column against time, one panel per column (PNG or SVG).

use plotters::coord::Shift;
use plotters::prelude::*;
use std::path::Path;
use std::sync::OnceLock;
use stiction_framework::Recorder;

/// The font family the plots use; [`register_font`] gives it the embedded DejaVu Sans.
const FONT: &str = "sans-serif";

pub fn plot(rec: &Recorder, title: &str, path: &Path) -> anyhow::Result<()> {
    register_font()?;
    let n = rec.labels.len().max(1);
    let size = (1000, 40 + 220 * n as u32);
    let svg = path.extension().is_some_and(|e| e.eq_ignore_ascii_case("svg"));
    if svg {
        let root = SVGBackend::new(path, size).into_drawing_area();
        draw(rec, title, &root)?;
        root.present()?;
    } else {
        let root = BitMapBackend::new(path, size).into_drawing_area();
        draw(rec, title, &root)?;
        root.present()?;
    }
    Ok(())
}

fn draw<DB: DrawingBackend>(rec: &Recorder, title: &str, root: &DrawingArea<DB, Shift>) -> anyhow::Result<()>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE).map_err(|e| anyhow::anyhow!("{e}"))?;
    let root = root.titled(title, (FONT, 22)).map_err(|e| anyhow::anyhow!("{e}"))?;
    let n = rec.labels.len().max(1);
    let panels = root.split_evenly((n, 1));
    let (t0, t1) = (rec.time.first().copied().unwrap_or(0.0), rec.time.last().copied().unwrap_or(1.0));
    for (c, (label, area)) in rec.labels.iter().zip(panels.iter()).enumerate() {
        let ys: Vec<f64> = rec.rows.iter().map(|r| r[c]).filter(|v| v.is_finite()).collect();
        let (mut lo, mut hi) = ys.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| (a.min(v), b.max(v)));
        if !lo.is_finite() {
            (lo, hi) = (-1.0, 1.0);
        }
        if hi - lo < 1e-12 * (1.0 + hi.abs()) {
            lo -= 0.5 * (1.0 + lo.abs()) * 1e-3;
            hi += 0.5 * (1.0 + hi.abs()) * 1e-3;
        }
        let pad = 0.05 * (hi - lo);
        let mut chart = ChartBuilder::on(area)
            .margin(8)
            .x_label_area_size(30)
            .y_label_area_size(70)
            .build_cartesian_2d(t0..t1.max(t0 + 1e-12), (lo - pad)..(hi + pad))
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        chart.configure_mesh().x_desc("t [s]").y_desc(label.as_str()).draw().map_err(|e| anyhow::anyhow!("{e}"))?;
        chart
            .draw_series(LineSeries::new(rec.time.iter().zip(&rec.rows).map(|(t, r)| (*t, r[c])), &BLUE))
            .map_err(|e| anyhow::anyhow!("{e}"))?;
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

/// The plot formats by extension (`.png`, `.svg`), checked before a run.
pub fn check_path(path: &Path) -> anyhow::Result<()> {
    match path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase).as_deref() {
        Some("png" | "svg") => Ok(()),
        other => anyhow::bail!(
            "--plot {}: plots are written as .png or .svg, not {}",
            path.display(),
            other.map(|e| format!(".{e}")).unwrap_or_else(|| "a file without extension".into())
        ),
    }
}
