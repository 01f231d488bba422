//! `I/N` shard specifications, given on the command line or read from a batch scheduler's
//! environment (Kubernetes Indexed Jobs, Slurm job arrays). Reads variables only through the
//! lookup it is given (so tests need no process environment).

use crate::{BakeError, Result};

/// Shard `index` (0-based) of `count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Shard {
    pub index: u32,
    pub count: u32,
}

impl Shard {
    /// Parses `I/N` (0 <= I < N).
    pub fn parse(s: &str) -> Result<Shard> {
        let (i, n) = s.split_once('/').ok_or_else(|| {
            BakeError::new(format!(
                "--shard {s}: expected I/N (for example 0/4) or auto"
            ))
        })?;
        let index: u32 = i.trim().parse().map_err(|_| {
            BakeError::new(format!(
                "--shard {s}: shard index '{i}' is not a whole number"
            ))
        })?;
        let count: u32 = n.trim().parse().map_err(|_| {
            BakeError::new(format!(
                "--shard {s}: shard count '{n}' is not a whole number"
            ))
        })?;
        Shard::new(index, count).map_err(|e| BakeError::new(format!("--shard {s}: {e}")))
    }

    pub fn new(index: u32, count: u32) -> Result<Shard> {
        if count == 0 {
            return Err(BakeError::new("the shard count must be at least 1"));
        }
        if index >= count {
            return Err(BakeError::new(format!(
                "shard index {index} is not below the count {count} (indices are 0-based)"
            )));
        }
        Ok(Shard { index, count })
    }

    /// The shard of this process from a scheduler's variables:
    /// - Kubernetes Indexed Job: `JOB_COMPLETION_INDEX`, count from `PROCMODEL_SHARDS`
    ///   (Kubernetes does not expose `completions` to the pod);
    /// - Slurm job array: `SLURM_ARRAY_TASK_ID` minus `SLURM_ARRAY_TASK_MIN` (0 when unset),
    ///   count from `SLURM_ARRAY_TASK_COUNT` (or `PROCMODEL_SHARDS`).
    pub fn from_env(var: impl Fn(&str) -> Option<String>) -> Result<Shard> {
        let num = |name: &str| -> Result<Option<u32>> {
            match var(name) {
                None => Ok(None),
                Some(v) if v.trim().is_empty() => Ok(None),
                Some(v) => v.trim().parse().map(Some).map_err(|_| {
                    BakeError::new(format!("--shard auto: {name}='{v}' is not a whole number"))
                }),
            }
        };
        let explicit = num("PROCMODEL_SHARDS")?;
        if let Some(index) = num("JOB_COMPLETION_INDEX")? {
            let count = explicit.ok_or_else(|| {
                BakeError::new(
                    "--shard auto: JOB_COMPLETION_INDEX is set but PROCMODEL_SHARDS is not (set it to the Job's completions)",
                )
            })?;
            return Shard::new(index, count)
                .map_err(|e| BakeError::new(format!("--shard auto: {e}")));
        }
        if let Some(id) = num("SLURM_ARRAY_TASK_ID")? {
            let min = num("SLURM_ARRAY_TASK_MIN")?.unwrap_or(0);
            let count = num("SLURM_ARRAY_TASK_COUNT")?.or(explicit).ok_or_else(|| {
                BakeError::new("--shard auto: SLURM_ARRAY_TASK_ID is set but neither SLURM_ARRAY_TASK_COUNT nor PROCMODEL_SHARDS")
            })?;
            let index = id.checked_sub(min).ok_or_else(|| {
                BakeError::new(format!(
                    "--shard auto: SLURM_ARRAY_TASK_ID {id} is below SLURM_ARRAY_TASK_MIN {min}"
                ))
            })?;
            return Shard::new(index, count)
                .map_err(|e| BakeError::new(format!("--shard auto: {e}")));
        }
        Err(BakeError::new(
            "--shard auto: neither JOB_COMPLETION_INDEX (Kubernetes Indexed Job) nor SLURM_ARRAY_TASK_ID (Slurm array) is set",
        ))
    }

    /// The manifest's name in the store.
    pub fn manifest_path(&self) -> String {
        format!(
            "manifests/shard-{:05}-of-{:05}.json",
            self.index, self.count
        )
    }

    /// The timings file's name in the store.
    pub fn timings_path(&self) -> String {
        format!("timings/shard-{:05}-of-{:05}.json", self.index, self.count)
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |k| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn parses_and_rejects() {
        assert_eq!(Shard::parse("2/4").unwrap(), Shard { index: 2, count: 4 });
        for bad in ["4/4", "1/0", "x/4", "3", "-1/4"] {
            let e = Shard::parse(bad).unwrap_err().to_string();
            assert!(e.contains(bad), "{e}");
        }
    }

    #[test]
    fn reads_schedulers() {
        let k = Shard::from_env(env(&[
            ("JOB_COMPLETION_INDEX", "3"),
            ("PROCMODEL_SHARDS", "8"),
        ]));
        assert_eq!(k.unwrap(), Shard { index: 3, count: 8 });
        let s = Shard::from_env(env(&[
            ("SLURM_ARRAY_TASK_ID", "5"),
            ("SLURM_ARRAY_TASK_MIN", "1"),
            ("SLURM_ARRAY_TASK_COUNT", "10"),
        ]));
        assert_eq!(
            s.unwrap(),
            Shard {
                index: 4,
                count: 10
            }
        );
        let e = Shard::from_env(env(&[("JOB_COMPLETION_INDEX", "3")])).unwrap_err();
        assert!(e.to_string().contains("PROCMODEL_SHARDS"));
        assert!(Shard::from_env(env(&[])).is_err());
        let e = Shard::from_env(env(&[
            ("JOB_COMPLETION_INDEX", "9"),
            ("PROCMODEL_SHARDS", "8"),
        ]));
        assert!(e.unwrap_err().to_string().contains("not below"));
    }
}
