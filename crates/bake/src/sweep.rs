//! Parameter sweeps: `--attr Name=1..100` / `--attr Name=a,b,c` / `--attr Name=1,2,3;4,5,6` axes, their points (the
//! Cartesian product, first axis slowest, in a fixed order) and the summary statistics a
//! merge reports over the variants. Values stay text here; the command line types them by
//! the generator's declared attributes.

use crate::{BakeError, Result};
use serde::Serialize;

/// Most points one sweep may have (a typo such as `1..10000000` is an error, not a day's bake).
pub const MAX_POINTS: usize = 1_000_000;

/// One swept attribute and its values (as text).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Axis {
    pub name: String,
    pub values: Vec<String>,
}

impl Axis {
    /// Parses `Name=A..B` (whole numbers, inclusive, either direction), `Name=v1,v2,...`, or
    /// `Name=v1;v2;...` when the values hold commas.
    pub fn parse(arg: &str) -> Result<Axis> {
        let (name, spec) = arg.split_once('=').ok_or_else(|| {
            BakeError::new(format!(
                "--attr {arg}: expected Name=A..B or Name=v1,v2,..."
            ))
        })?;
        let name = name.trim();
        if name.is_empty() {
            return Err(BakeError::new(format!(
                "--attr {arg}: the attribute name is empty"
            )));
        }
        let spec = spec.trim();
        let values = if let Some((a, b)) = spec.split_once("..") {
            let num = |s: &str| -> Result<i64> {
                s.trim().parse().map_err(|_| {
                    BakeError::new(format!(
                        "--attr {arg}: range bound '{s}' is not a whole number"
                    ))
                })
            };
            let (a, b) = (num(a)?, num(b)?);
            let len = a.abs_diff(b) as usize + 1;
            if len > MAX_POINTS {
                return Err(BakeError::new(format!(
                    "--attr {arg}: {len} values is more than a sweep may have ({MAX_POINTS})"
                )));
            }
            if a <= b {
                (a..=b).map(|v| v.to_string()).collect()
            } else {
                (b..=a).rev().map(|v| v.to_string()).collect()
            }
        } else {
            // `;` separates values that hold commas themselves (colours, vectors: 255,0,0;0,0,255).
            let sep = if spec.contains(';') { ';' } else { ',' };
            let v: Vec<String> = spec.split(sep).map(|s| s.trim().to_owned()).collect();
            if v.iter().any(|s| s.is_empty()) {
                return Err(BakeError::new(format!(
                    "--attr {arg}: an empty value in the list"
                )));
            }
            v
        };
        Ok(Axis {
            name: name.to_owned(),
            values,
        })
    }
}

/// The points of `axes`: one `(name, value)` list per point. Two axes of one name are an error.
pub fn points(axes: &[Axis]) -> Result<Vec<Vec<(String, String)>>> {
    for (i, a) in axes.iter().enumerate() {
        if axes[..i].iter().any(|b| b.name == a.name) {
            return Err(BakeError::new(format!("--attr {}: swept twice", a.name)));
        }
    }
    let mut total: usize = 1;
    for a in axes {
        total = total.saturating_mul(a.values.len());
    }
    if total > MAX_POINTS {
        return Err(BakeError::new(format!(
            "the sweep has {total} points, more than {MAX_POINTS}"
        )));
    }
    let mut out = Vec::with_capacity(total);
    for mut n in 0..total {
        let mut point = vec![(String::new(), String::new()); axes.len()];
        for (i, a) in axes.iter().enumerate().rev() {
            let len = a.values.len();
            point[i] = (a.name.clone(), a.values[n % len].clone());
            n /= len;
        }
        out.push(point);
    }
    Ok(out)
}

/// Summary statistics of a numeric column over a sweep's variants.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Distribution {
    pub count: usize,
    pub min: f64,
    pub max: f64,
    pub mean: f64,
    pub stddev: f64,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
}

impl Distribution {
    /// None for no values. Percentiles are nearest-rank.
    pub fn of(values: &[f64]) -> Option<Distribution> {
        if values.is_empty() {
            return None;
        }
        let mut v = values.to_vec();
        v.sort_by(f64::total_cmp);
        let n = v.len();
        let mean = v.iter().sum::<f64>() / n as f64;
        let var = v.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n as f64;
        let rank = |p: f64| v[((p * n as f64).ceil() as usize).clamp(1, n) - 1];
        Some(Distribution {
            count: n,
            min: v[0],
            max: v[n - 1],
            mean,
            stddev: var.sqrt(),
            p50: rank(0.50),
            p90: rank(0.90),
            p99: rank(0.99),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axes_parse() {
        let a = Axis::parse("Seed=1..3").unwrap();
        assert_eq!(a.values, vec!["1", "2", "3"]);
        assert_eq!(Axis::parse("S=3..1").unwrap().values, vec!["3", "2", "1"]);
        assert_eq!(Axis::parse("F=2, 4,8").unwrap().values, vec!["2", "4", "8"]);
        // Values holding commas are separated by `;`.
        assert_eq!(
            Axis::parse("Tint=255,0,0; #00ff00;0,0,255").unwrap().values,
            vec!["255,0,0", "#00ff00", "0,0,255"]
        );
        for bad in ["Seed", "=1", "S=1..x", "S=1,,2", "S=0..99999999"] {
            let e = Axis::parse(bad).unwrap_err().to_string();
            assert!(e.contains(bad), "{e}");
        }
    }

    #[test]
    fn points_are_the_product_first_axis_slowest() {
        let axes = [
            Axis::parse("A=1..2").unwrap(),
            Axis::parse("B=x,y,z").unwrap(),
        ];
        let p = points(&axes).unwrap();
        assert_eq!(p.len(), 6);
        assert_eq!(
            p[0],
            vec![("A".into(), "1".into()), ("B".into(), "x".into())]
        );
        assert_eq!(
            p[5],
            vec![("A".into(), "2".into()), ("B".into(), "z".into())]
        );
        assert!(points(&[axes[0].clone(), axes[0].clone()]).is_err());
        assert_eq!(points(&[]).unwrap().len(), 1);
    }

    #[test]
    fn distributions() {
        let d = Distribution::of(&[4.0, 1.0, 3.0, 2.0]).unwrap();
        assert_eq!(
            (d.min, d.max, d.mean, d.p50, d.p99),
            (1.0, 4.0, 2.5, 2.0, 4.0)
        );
        assert!((d.stddev - 1.118_033_988_7).abs() < 1e-9);
        assert!(Distribution::of(&[]).is_none());
    }
}
