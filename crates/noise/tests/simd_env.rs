//! `PROCMODEL_SIMD` forces the level of every `Exec { simd: None }` fill for the whole
//! process: this test binary re-runs itself once per available level with the variable set
//! and checks, in the child, that the forced level is the one used and that the bytes are
//! those of every other level.

use procmodel_noise::{
    Basis, Exec, Fractal, Grid2, Grid3, Noise, NoiseConfig, NoiseError, SIMD_ENV, SimdLevel,
};
use std::process::Command;

/// Set in a child process to the level it must observe (`SimdLevel::name`).
const CHILD: &str = "PROCMODEL_NOISE_SIMD_ENV_CHILD";

const G2: Grid2 = Grid2 {
    origin: [-7.25, 3.5],
    step: [0.37, 0.21],
    size: [41, 13],
};
const G3: Grid3 = Grid3 {
    origin: [-1.5, 0.75, 2.0],
    step: [0.29, 0.41, 0.33],
    size: [19, 5, 4],
};

fn configs() -> Vec<NoiseConfig> {
    let base = NoiseConfig::default();
    vec![
        base,
        NoiseConfig {
            basis: Basis::Perlin,
            seed: 7,
            ..base
        },
        NoiseConfig {
            basis: Basis::Simplex,
            ..base
        },
        NoiseConfig {
            basis: Basis::Simplex,
            fractal: Fractal::Fbm,
            octaves: 6,
            ..base
        },
    ]
}

/// Every config's 2D and 3D grid as bits, filled at `simd`.
fn fingerprint(simd: Option<SimdLevel>) -> Vec<u32> {
    let exec = Exec {
        simd,
        parallel: false,
    };
    let mut all = Vec::new();
    for cfg in configs() {
        let n = Noise::new(cfg).unwrap();
        let mut a = vec![0.0f32; G2.size[0] * G2.size[1]];
        n.fill2(&G2, &mut a, exec).unwrap();
        let mut b = vec![0.0f32; G3.size[0] * G3.size[1] * G3.size[2]];
        n.fill3(&G3, &mut b, exec).unwrap();
        all.extend(a.iter().chain(&b).map(|v| v.to_bits()));
    }
    all
}

fn run_child(value: &str, expect: &str) -> std::process::Output {
    Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "forced_level_applies_to_the_whole_process",
            "--nocapture",
        ])
        .env(SIMD_ENV, value)
        .env(CHILD, expect)
        .output()
        .unwrap()
}

#[test]
fn forced_level_applies_to_the_whole_process() {
    if let Ok(expect) = std::env::var(CHILD) {
        // Child: the variable is set for this whole process.
        let want = SimdLevel::parse(&expect).unwrap();
        let got = SimdLevel::auto();
        match want {
            Some(l) => assert_eq!(got, Ok(l), "{SIMD_ENV} names {l:?}"),
            None => assert_eq!(got, Ok(SimdLevel::best())),
        }
        let forced = fingerprint(None);
        assert_eq!(forced, fingerprint(Some(SimdLevel::Scalar)));
        println!("child ok: {:?} {} values", got, forced.len());
        return;
    }
    let reference = fingerprint(Some(SimdLevel::Scalar));
    for l in SimdLevel::ALL.into_iter().filter(|l| l.is_available()) {
        assert_eq!(fingerprint(Some(l)), reference, "{l:?}");
        let aliases: &[&str] = if l == SimdLevel::Scalar {
            &["scalar", "portable", " Portable "]
        } else {
            &[l.name()]
        };
        for &value in aliases {
            let out = run_child(value, l.name());
            let stdout = String::from_utf8_lossy(&out.stdout);
            assert!(
                out.status.success() && stdout.contains("child ok"),
                "{SIMD_ENV}={value}: {stdout}{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
    let out = run_child("auto", "auto");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn level_names_parse_and_bad_names_are_errors() {
    for l in SimdLevel::ALL {
        assert_eq!(SimdLevel::parse(l.name()), Ok(Some(l)));
        assert_eq!(SimdLevel::parse(&l.name().to_uppercase()), Ok(Some(l)));
    }
    assert_eq!(SimdLevel::parse("portable"), Ok(Some(SimdLevel::Scalar)));
    assert_eq!(SimdLevel::parse(""), Ok(None));
    assert_eq!(SimdLevel::parse("auto"), Ok(None));
    let err = SimdLevel::parse("avx3").unwrap_err();
    assert_eq!(err, NoiseError::SimdEnv("avx3".into()));
    let msg = err.to_string();
    assert!(
        msg.contains("PROCMODEL_SIMD") && msg.contains("\"avx3\""),
        "{msg}"
    );
}

/// A forced level the CPU lacks, or a bad name, makes fills fail with a clear error
/// instead of silently running another level.
#[test]
fn bad_or_unavailable_forced_levels_fail_the_fill() {
    if std::env::var(CHILD).is_ok() {
        return;
    }
    let check = |value: &str, want: &str| {
        let out = Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "child_fill_reports_error", "--nocapture"])
            .env(SIMD_ENV, value)
            .env(CHILD, "error")
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && stdout.contains(want),
            "{SIMD_ENV}={value}: want {want:?} in {stdout}"
        );
    };
    check("avx3", "PROCMODEL_SIMD must be");
    if let Some(l) = SimdLevel::ALL.into_iter().find(|l| !l.is_available()) {
        check(l.name(), "is not available on this cpu");
    }
}

#[test]
fn child_fill_reports_error() {
    if std::env::var(CHILD).as_deref() != Ok("error") {
        return;
    }
    let n = Noise::new(NoiseConfig::default()).unwrap();
    let mut out = vec![0.0f32; G2.size[0] * G2.size[1]];
    let err = n.fill2(&G2, &mut out, Exec::default()).unwrap_err();
    // An explicit level still works.
    let ok = n.fill2(
        &G2,
        &mut out,
        Exec {
            simd: Some(SimdLevel::Scalar),
            parallel: false,
        },
    );
    assert_eq!(ok, Ok(()));
    println!("child error: {err}");
}
