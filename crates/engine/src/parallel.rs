//! Parallel generation: worker threads, each with its own Luau VM over a copy of the scene
//! that keeps the scene's referents, run independent models; the engine applies the results
//! in scene order, so the outcome does not depend on the number of workers.

use crate::apply::{self, Prepared, Produced};
use procmodel_luau::{Host, HostConfig};
use rbx_dom_weak::{InstanceBuilder, WeakDom};
use rbx_types::Ref;
use std::collections::HashSet;
use std::time::{Duration, Instant};

pub type RunResult = Result<(Prepared, Produced), String>;

/// A deep copy of the scene with the same referents (so a model is the same Ref in a
/// worker), leaving out the old results of `regenerating` models (they are about to be
/// replaced, and copying them is most of the cost).
pub fn clone_scene(dom: &WeakDom, regenerating: &[Ref]) -> WeakDom {
    fn builder(dom: &WeakDom, r: Ref, skip_results: &HashSet<Ref>) -> InstanceBuilder {
        let inst = dom.get_by_ref(r).expect("child exists");
        let mut b = InstanceBuilder::new(inst.class)
            .with_referent(r)
            .with_name(inst.name.clone())
            .with_properties(inst.properties.iter().map(|(k, v)| (*k, v.clone())));
        let skip_folders = skip_results.contains(&r);
        for &c in inst.children() {
            if skip_folders
                && dom
                    .get_by_ref(c)
                    .is_some_and(|i| i.class == "GeneratedFolder")
            {
                continue;
            }
            b.add_child(builder(dom, c, skip_results));
        }
        b
    }
    let skip: HashSet<Ref> = regenerating.iter().copied().collect();
    WeakDom::new(builder(dom, dom.root_ref(), &skip))
}

/// Runs `models` split round-robin over `workers` threads. Returns, per worker, its DOM (which
/// holds the produced results) and one result per model it ran.
pub fn run(
    scene: &WeakDom,
    models: &[Ref],
    workers: usize,
    config: &HostConfig,
) -> Vec<(WeakDom, Vec<(Ref, RunResult, Duration)>)> {
    let copies: Vec<WeakDom> = (0..workers).map(|_| clone_scene(scene, models)).collect();
    std::thread::scope(|s| {
        let handles: Vec<_> = copies
            .into_iter()
            .enumerate()
            .map(|(w, dom)| {
                let mine: Vec<Ref> = models.iter().copied().skip(w).step_by(workers).collect();
                let config = config.clone();
                s.spawn(move || worker(dom, &mine, config))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| {
                    (WeakDom::new(InstanceBuilder::new("DataModel")), Vec::new())
                })
            })
            .collect()
    })
}

fn worker(
    dom: WeakDom,
    models: &[Ref],
    config: HostConfig,
) -> (WeakDom, Vec<(Ref, RunResult, Duration)>) {
    let host = match Host::with_dom(config, dom) {
        Ok(h) => h,
        Err(e) => {
            let msg = format!("cannot start a worker VM: {e}");
            let empty = WeakDom::new(InstanceBuilder::new("DataModel"));
            return (
                empty,
                models
                    .iter()
                    .map(|&m| (m, Err(msg.clone()), Duration::ZERO))
                    .collect(),
            );
        }
    };
    let mut required = std::collections::HashMap::new();
    let mut out = Vec::with_capacity(models.len());
    for &m in models {
        let start = Instant::now();
        let result = host
            .with_dom_ref(|d| apply::prepare(d, m))
            .and_then(|p| apply::produce(&host, &p, &mut required).map(|o| (p, o)));
        out.push((m, result, start.elapsed()));
    }
    (host.take_dom(), out)
}
