//! The one parser of numeric command-line values, as clap `value_parser` functions: every
//! numeric flag of every subcommand goes through one of these, so `inf`, `nan`, negative,
//! zero and out-of-range values are refused with one kind of message before any work starts.

use glam::Vec3;
use std::time::Duration;

/// Longest accepted duration: 1,000,000 s (about 11.6 days). Longer ones would only ever
/// mean "no limit" and risk overflowing deadline arithmetic.
pub const MAX_SECONDS: f64 = 1_000_000.0;
/// Shortest accepted duration: 1 ms (the watchdog's resolution).
pub const MIN_SECONDS: f64 = 0.001;

/// A duration in seconds (`--timeout`, `--max-wait`, ...): a decimal number from 0.001
/// to 1,000,000 inclusive (fractions allowed, e.g. `0.5`, `2.5e1`). Zero, negative values,
/// `inf` and `nan` are refused.
pub fn seconds(s: &str) -> Result<Duration, String> {
    let v = number(s)?;
    if !(MIN_SECONDS..=MAX_SECONDS).contains(&v) {
        return Err(format!(
            "{} seconds is out of range: use {MIN_SECONDS} to {MAX_SECONDS}",
            s.trim()
        ));
    }
    Duration::try_from_secs_f64(v).map_err(|e| format!("'{s}': {e}"))
}

/// Largest accepted `--scale` (and smallest: its inverse): beyond it sizes of parts leave
/// the range Roblox can represent.
pub const MAX_SCALE: f64 = 1_000_000.0;

/// A scale factor (`--scale`): a positive decimal number from 0.000001 to 1,000,000
/// inclusive. Zero, negative values, `inf` and `nan` are refused.
pub fn scale(s: &str) -> Result<f32, String> {
    let v = number(s)?;
    if !(1.0 / MAX_SCALE..=MAX_SCALE).contains(&v) {
        return Err(format!(
            "scale {} is out of range: use {} to {MAX_SCALE}",
            s.trim(),
            1.0 / MAX_SCALE
        ));
    }
    Ok(v as f32)
}

/// Largest accepted size component, in studs.
pub const MAX_STUDS: f64 = 1_000_000.0;

/// A box size (`--size`): `X,Y,Z`, three decimal numbers separated by commas (spaces
/// allowed), each from 0.001 to 1,000,000 studs inclusive. Zero, negative values, `inf`
/// and `nan` are refused.
pub fn size(s: &str) -> Result<Vec3, String> {
    let parts: Vec<&str> = s.split(',').collect();
    let [x, y, z] = parts[..] else {
        return Err(format!(
            "'{s}' is not X,Y,Z (three numbers separated by commas)"
        ));
    };
    let mut v = [0.0f32; 3];
    for (out, (axis, text)) in v.iter_mut().zip(["X", "Y", "Z"].into_iter().zip([x, y, z])) {
        let n = number(text).map_err(|e| format!("{axis} of '{s}': {e}"))?;
        if !(0.001..=MAX_STUDS).contains(&n) {
            return Err(format!(
                "{axis} of '{s}' is {}: use 0.001 to {MAX_STUDS} studs",
                text.trim()
            ));
        }
        *out = n as f32;
    }
    Ok(Vec3::from_array(v))
}

/// Most worker VMs accepted: each is a full VM with its own copy of the scene.
pub const MAX_JOBS: usize = 256;

/// A number of worker VMs (`--jobs`): a whole number from 1 to 256 inclusive.
pub fn jobs(s: &str) -> Result<usize, String> {
    whole(s, 1, MAX_JOBS as u64).map(|n| n as usize)
}

/// Largest accepted memory amount: 1,048,576 MB (1 TiB).
pub const MAX_MEGABYTES: u64 = 1 << 20;

/// An amount of memory or output in megabytes (`--memory`, `--max-output-mb`, ...): a whole
/// number from 1 to 1,048,576 inclusive. Returns bytes (MB × 1,048,576).
pub fn megabytes(s: &str) -> Result<u64, String> {
    whole(s, 1, MAX_MEGABYTES).map(|mb| mb << 20)
}

/// Largest accepted count.
pub const MAX_COUNT: u64 = 1 << 40;

/// A count of things (`--max-instances`, frames, ...): a whole number from 1 to 2^40
/// (1,099,511,627,776) inclusive.
pub fn count(s: &str) -> Result<u64, String> {
    whole(s, 1, MAX_COUNT)
}

/// A finite decimal number.
fn number(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let v: f64 = t.parse().map_err(|_| format!("'{s}' is not a number"))?;
    if !v.is_finite() {
        return Err(format!("'{s}' is not a finite number"));
    }
    Ok(v)
}

/// A whole number in `min..=max`.
fn whole(s: &str, min: u64, max: u64) -> Result<u64, String> {
    let t = s.trim();
    let n: u64 = match t.parse() {
        Ok(n) => n,
        Err(_) if t.starts_with('-') && t[1..].bytes().all(|b| b.is_ascii_digit()) => {
            return Err(format!("{t} is negative: use {min} to {max}"));
        }
        Err(_) if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) => {
            return Err(format!("{t} is too large: use {min} to {max}"));
        }
        Err(_) => return Err(format!("'{s}' is not a whole number")),
    };
    if !(min..=max).contains(&n) {
        return Err(format!("{n} is out of range: use {min} to {max}"));
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_range() {
        assert_eq!(seconds("10"), Ok(Duration::from_secs(10)));
        assert_eq!(seconds("0.5"), Ok(Duration::from_millis(500)));
        assert_eq!(seconds(" 2.5e1 "), Ok(Duration::from_secs(25)));
        for bad in [
            "0", "-1", "inf", "-inf", "nan", "NaN", "1e20", "1e400", "", "ten", "0.0001",
        ] {
            assert!(seconds(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn scale_and_size_ranges() {
        assert_eq!(scale("2"), Ok(2.0));
        for bad in ["0", "-2", "inf", "nan", "1e300", "1e-300"] {
            assert!(scale(bad).is_err(), "{bad}");
        }
        assert_eq!(size("12, 20,12"), Ok(Vec3::new(12.0, 20.0, 12.0)));
        for bad in [
            "1,2", "1,2,3,4", "1,0,1", "1,-1,1", "1,nan,1", "inf,1,1", "1e30,1,1", "a,b,c",
        ] {
            assert!(size(bad).is_err(), "{bad}");
        }
        // The value out of range is quoted as written, not as 40 (or 300) digits.
        assert_eq!(
            scale("1e300").unwrap_err(),
            "scale 1e300 is out of range: use 0.000001 to 1000000"
        );
        assert_eq!(
            seconds("1e20").unwrap_err(),
            "1e20 seconds is out of range: use 0.001 to 1000000"
        );
        assert_eq!(
            size("1e39, 1, 1").unwrap_err(),
            "X of '1e39, 1, 1' is 1e39: use 0.001 to 1000000 studs"
        );
    }

    #[test]
    fn whole_number_ranges() {
        assert_eq!(jobs("4"), Ok(4));
        assert_eq!(megabytes("2"), Ok(2 << 20));
        assert_eq!(count("2000000"), Ok(2_000_000));
        for bad in [
            "0",
            "-1",
            "257",
            "1.5",
            "nan",
            "inf",
            "99999999999999999999999",
            "",
        ] {
            assert!(jobs(bad).is_err(), "{bad}");
        }
        assert!(megabytes("1048577").is_err());
        assert!(count("0").is_err());
        assert!(jobs("-3").unwrap_err().contains("negative"));
        assert!(
            jobs("99999999999999999999")
                .unwrap_err()
                .contains("too large")
        );
    }
}
