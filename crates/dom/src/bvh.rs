//! A bounding-volume hierarchy over spheres (a part's bounding sphere: its centre and half
//! its size's diagonal), for spatial queries that would otherwise test every part: the
//! candidates whose sphere's box meets a query box or a segment. Candidates are a superset of
//! what an exact test accepts; callers keep their exact tests and their order (the indices
//! come back sorted).

use glam::Vec3;

/// Items per leaf at most.
const LEAF: usize = 4;

#[derive(Clone, Copy, Debug)]
struct Node {
    lo: Vec3,
    hi: Vec3,
    /// A leaf: `items[start..start + count]`; an inner node: children at `start` and
    /// `start + 1` (count = 0).
    start: u32,
    count: u32,
}

/// The tree over the spheres it was built from (item `i` is the `i`-th sphere).
#[derive(Clone, Debug, Default)]
pub struct SphereTree {
    nodes: Vec<Node>,
    items: Vec<u32>,
    /// Each item's box, by item.
    boxes: Vec<(Vec3, Vec3)>,
}

impl SphereTree {
    /// Builds the tree over `(centre, radius)` spheres. Non-finite spheres are never
    /// returned by a query.
    pub fn build(spheres: &[(Vec3, f32)]) -> SphereTree {
        let boxes: Vec<(Vec3, Vec3)> = spheres
            .iter()
            .map(|&(c, r)| {
                let r = Vec3::splat(r.abs());
                (c - r, c + r)
            })
            .collect();
        let mut items: Vec<u32> = (0..spheres.len() as u32)
            .filter(|&i| {
                let (lo, hi) = boxes[i as usize];
                lo.is_finite() && hi.is_finite()
            })
            .collect();
        let mut tree = SphereTree {
            nodes: Vec::with_capacity(items.len() / 2 + 1),
            items: Vec::new(),
            boxes: Vec::new(),
        };
        if items.is_empty() {
            return tree;
        }
        tree.nodes.push(Node {
            lo: Vec3::ZERO,
            hi: Vec3::ZERO,
            start: 0,
            count: 0,
        });
        // (node, range of `items`)
        let mut todo = vec![(0usize, 0usize, items.len())];
        while let Some((node, a, b)) = todo.pop() {
            let slice = &mut items[a..b];
            let (mut lo, mut hi) = (Vec3::splat(f32::INFINITY), Vec3::splat(f32::NEG_INFINITY));
            let (mut clo, mut chi) = (lo, hi);
            for &i in slice.iter() {
                let (l, h) = boxes[i as usize];
                lo = lo.min(l);
                hi = hi.max(h);
                let c = (l + h) * 0.5;
                clo = clo.min(c);
                chi = chi.max(c);
            }
            if slice.len() <= LEAF {
                tree.nodes[node] = Node {
                    lo,
                    hi,
                    start: a as u32,
                    count: slice.len() as u32,
                };
                continue;
            }
            // Split at the median of the centres along the widest axis of the centres.
            let ext = chi - clo;
            let axis = if ext.x >= ext.y && ext.x >= ext.z {
                0
            } else if ext.y >= ext.z {
                1
            } else {
                2
            };
            let mid = slice.len() / 2;
            let key = |i: &u32| {
                let (l, h) = boxes[*i as usize];
                (l[axis] + h[axis]) * 0.5
            };
            slice.select_nth_unstable_by(mid, |x, y| key(x).total_cmp(&key(y)).then(x.cmp(y)));
            let first = tree.nodes.len();
            for _ in 0..2 {
                tree.nodes.push(Node {
                    lo: Vec3::ZERO,
                    hi: Vec3::ZERO,
                    start: 0,
                    count: 0,
                });
            }
            tree.nodes[node] = Node {
                lo,
                hi,
                start: first as u32,
                count: 0,
            };
            todo.push((first, a, a + mid));
            todo.push((first + 1, a + mid, b));
        }
        tree.items = items;
        tree.boxes = boxes;
        tree
    }

    /// The items whose sphere's box meets the box `lo..hi`, sorted.
    pub fn query_box(&self, lo: Vec3, hi: Vec3, out: &mut Vec<u32>) {
        self.query(out, |nlo, nhi| nlo.cmple(hi).all() && nhi.cmpge(lo).all());
    }

    /// The items whose sphere's box meets the segment from `origin` to `origin + dir`, sorted.
    pub fn query_segment(&self, origin: Vec3, dir: Vec3, out: &mut Vec<u32>) {
        let inv = dir.recip();
        self.query(out, |nlo, nhi| {
            segment_meets_box(origin, dir, inv, nlo, nhi)
        });
    }

    fn query(&self, out: &mut Vec<u32>, meets: impl Fn(Vec3, Vec3) -> bool) {
        out.clear();
        if self.nodes.is_empty() {
            return;
        }
        let mut stack = vec![0u32];
        while let Some(n) = stack.pop() {
            let node = self.nodes[n as usize];
            if !meets_padded(&meets, node.lo, node.hi) {
                continue;
            }
            if node.count > 0 {
                let s = node.start as usize;
                for &i in &self.items[s..s + node.count as usize] {
                    let (lo, hi) = self.boxes[i as usize];
                    if meets_padded(&meets, lo, hi) {
                        out.push(i);
                    }
                }
            } else {
                stack.push(node.start);
                stack.push(node.start + 1);
            }
        }
        out.sort_unstable();
    }
}

/// Whether the segment from `origin` to `origin + dir` comes within `radius` of `centre` (a
/// bounding-sphere test of a ray or a sweep's centre line).
pub fn segment_meets_sphere(origin: Vec3, dir: Vec3, centre: Vec3, radius: f32) -> bool {
    let len2 = dir.length_squared();
    let t = if len2 > 0.0 {
        ((centre - origin).dot(dir) / len2).clamp(0.0, 1.0)
    } else {
        0.0
    };
    (origin + dir * t).distance_squared(centre) <= radius * radius
}

/// `meets` on the box grown by a little slack: the spheres are the callers' bounds, and an
/// exact test on them must never lose a candidate to rounding here.
fn meets_padded(meets: &impl Fn(Vec3, Vec3) -> bool, lo: Vec3, hi: Vec3) -> bool {
    let pad = Vec3::splat(1e-3) + (hi - lo).abs() * 1e-6;
    meets(lo - pad, hi + pad)
}

/// Whether the segment `origin + t·dir`, t in 0..=1, meets the box (slab test; `inv` is
/// `dir.recip()`). A zero component of `dir` keeps the segment within that slab or misses.
fn segment_meets_box(origin: Vec3, dir: Vec3, inv: Vec3, lo: Vec3, hi: Vec3) -> bool {
    let (mut t0, mut t1) = (0.0f32, 1.0f32);
    for k in 0..3 {
        if dir[k] == 0.0 {
            if origin[k] < lo[k] || origin[k] > hi[k] {
                return false;
            }
            continue;
        }
        let (a, b) = ((lo[k] - origin[k]) * inv[k], (hi[k] - origin[k]) * inv[k]);
        let (a, b) = if a <= b { (a, b) } else { (b, a) };
        t0 = t0.max(a);
        t1 = t1.min(b);
        if t0 > t1 {
            return false;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn sphere_box(c: Vec3, r: f32) -> (Vec3, Vec3) {
        (c - Vec3::splat(r), c + Vec3::splat(r))
    }

    /// Brute force: every sphere whose box meets the query box.
    fn boxes_meeting(spheres: &[(Vec3, f32)], lo: Vec3, hi: Vec3) -> Vec<u32> {
        (0..spheres.len() as u32)
            .filter(|&i| {
                let (l, h) = sphere_box(spheres[i as usize].0, spheres[i as usize].1);
                l.cmple(hi).all() && h.cmpge(lo).all()
            })
            .collect()
    }

    /// Brute force: every sphere the segment comes within reach of, by the test queries
    /// apply after the tree (the tree's answer must contain these).
    fn spheres_on_segment(spheres: &[(Vec3, f32)], o: Vec3, d: Vec3) -> Vec<u32> {
        (0..spheres.len() as u32)
            .filter(|&i| {
                let (c, r) = spheres[i as usize];
                segment_meets_sphere(o, d, c, r)
            })
            .collect()
    }

    fn v() -> impl Strategy<Value = Vec3> {
        (-100.0f32..100.0, -100.0f32..100.0, -100.0f32..100.0)
            .prop_map(|(x, y, z)| Vec3::new(x, y, z))
    }

    proptest! {
        #[test]
        fn box_queries_find_every_box_that_meets_and_nothing_else(
            spheres in prop::collection::vec((v(), 0.0f32..30.0), 0..200),
            a in v(), b in v(),
        ) {
            let tree = SphereTree::build(&spheres);
            let (lo, hi) = (a.min(b), a.max(b));
            let mut got = Vec::new();
            tree.query_box(lo, hi, &mut got);
            let want = boxes_meeting(&spheres, lo, hi);
            // Everything that meets is found; anything extra is within the slack.
            for w in &want {
                prop_assert!(got.contains(w));
            }
            let slack = boxes_meeting(&spheres, lo - Vec3::splat(0.01), hi + Vec3::splat(0.01));
            for g in &got {
                prop_assert!(slack.contains(g), "{g} is far outside the query");
            }
            prop_assert!(got.windows(2).all(|w| w[0] < w[1]), "sorted, no repeats");
        }

        #[test]
        fn segment_queries_find_every_sphere_the_segment_enters(
            spheres in prop::collection::vec((v(), 0.0f32..30.0), 0..200),
            o in v(), d in v(), axis in 0usize..4,
        ) {
            // Some segments along an axis (zero components), as downward raycasts are.
            let d = match axis {
                0 => Vec3::new(0.0, d.y, 0.0),
                1 => Vec3::new(d.x, 0.0, 0.0),
                _ => d,
            };
            let tree = SphereTree::build(&spheres);
            let mut got = Vec::new();
            tree.query_segment(o, d, &mut got);
            for w in spheres_on_segment(&spheres, o, d) {
                prop_assert!(got.contains(&w), "sphere {w} missed");
            }
            prop_assert!(got.windows(2).all(|w| w[0] < w[1]));
        }
    }

    #[test]
    fn an_empty_tree_and_non_finite_spheres_answer_nothing() {
        let mut out = vec![7];
        SphereTree::build(&[]).query_box(Vec3::splat(-1.0), Vec3::splat(1.0), &mut out);
        assert!(out.is_empty());
        let tree = SphereTree::build(&[
            (Vec3::NAN, 1.0),
            (Vec3::ZERO, f32::INFINITY),
            (Vec3::ZERO, 1.0),
        ]);
        tree.query_box(Vec3::splat(-1e9), Vec3::splat(1e9), &mut out);
        assert_eq!(out, [2]);
    }
}
