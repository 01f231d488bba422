//! Parallel generation: worker threads, each with its own Luau VM over a copy of the scene
//! that keeps the scene's referents, run independent models; the engine applies the results
//! in scene order, so the outcome does not depend on the number of workers.

use crate::apply::{self, Prepared, Produced};
use procmodel_luau::{Host, HostConfig};
use rbx_dom_weak::{InstanceBuilder, WeakDom};
use rbx_types::Ref;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::Sender;
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

/// The models of one parallel step, handed out one at a time: each VM (the engine's own and
/// the workers') takes the next model when it is free, so a slow model or a worker's start-up
/// does not leave the others idle. Which VM runs a model does not change its results; the
/// engine applies them in scene order.
pub struct Queue<'a> {
    models: &'a [Ref],
    next: AtomicUsize,
}

impl<'a> Queue<'a> {
    pub fn new(models: &'a [Ref]) -> Queue<'a> {
        Queue {
            models,
            next: AtomicUsize::new(0),
        }
    }

    pub fn take(&self) -> Option<Ref> {
        self.models
            .get(self.next.fetch_add(1, Ordering::Relaxed))
            .copied()
    }
}

/// Runs one model to completion on `host` and positions its results (steps 2–3) there.
pub fn run_one(
    host: &Host,
    m: Ref,
    required: &mut HashMap<Ref, String>,
) -> (Ref, RunResult, Duration) {
    let start = Instant::now();
    let result = host
        .with_dom_ref(|d| apply::prepare(d, m))
        .and_then(|p| apply::produce(host, &p, required).map(|o| (p, o)))
        .map(|(p, mut o)| {
            host.with_dom_mut(|d| apply::place(d, m, &o));
            o.placed = true;
            (p, o)
        });
    (m, result, start.elapsed())
}

/// One model's run on a worker, sent to the engine as soon as it is done: its results moved
/// out of the worker's tree into a tree of their own.
pub struct Finished {
    pub model: Ref,
    pub result: Result<(Prepared, Produced, Option<WeakDom>), String>,
    pub elapsed: Duration,
}

/// A worker thread's share: its own VM over `dom` (a [`clone_scene`] copy), taking models
/// from `queue` until it is empty and sending each result as it finishes.
pub fn worker(dom: WeakDom, queue: &Queue, config: HostConfig, tx: &Sender<Finished>) {
    let host = match Host::with_dom(config, dom) {
        Ok(h) => h,
        Err(e) => {
            // Fail the models this worker takes (the others keep running).
            let msg = format!("cannot start a worker VM: {e}");
            while let Some(model) = queue.take() {
                let _ = tx.send(Finished {
                    model,
                    result: Err(msg.clone()),
                    elapsed: Duration::ZERO,
                });
            }
            return;
        }
    };
    let mut required = HashMap::new();
    while let Some(m) = queue.take() {
        let (model, result, elapsed) = run_one(&host, m, &mut required);
        let result = result.map(|(p, o)| {
            let mut held = WeakDom::new(InstanceBuilder::new("Folder"));
            let root = held.root_ref();
            host.with_dom_mut(|d| d.transfer(o.container, &mut held, root));
            (p, o, Some(held))
        });
        if tx
            .send(Finished {
                model,
                result,
                elapsed,
            })
            .is_err()
        {
            return;
        }
    }
}
