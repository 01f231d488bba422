//! The state of the spatial index of a world's parts that spatial queries
//! (`classes/worldroot.rs`) build and use: which world, the scene's write count it was built
//! at (`Ctx::query_epoch`), the parts in pre-order with a sphere tree over
//! their bounding spheres. A query uses it only while nothing was written to the scene
//! since; otherwise it scans the world, and the second query at one write count builds it (a
//! script alternating writes and queries never pays for a build it cannot reuse).

use procmodel_dom::bvh::SphereTree;
use rbx_types::Ref;

/// One world's parts, as of one write count.
pub struct QueryIndex {
    pub root: Ref,
    pub epoch: u64,
    /// Every BasePart under `root` (not under a nested WorldModel), in pre-order.
    pub parts: Vec<Ref>,
    /// Over the parts' bounding spheres; item `i` is `parts[i]`.
    pub tree: SphereTree,
    /// The Terrains under `root`, in pre-order.
    pub terrains: Vec<Ref>,
}

#[derive(Default)]
pub struct IndexState {
    pub index: Option<QueryIndex>,
    /// The world and write count of the last query that scanned.
    pub last_scan: Option<(Ref, u64)>,
}
