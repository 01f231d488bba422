//! BSP trees that classify space against a solid, in an arena, every walk iterative.
//!
//! A node's plane splits space; the front subtree classifies what is in front of it, the
//! back subtree what is behind. A point that falls off a front edge (no front child) is
//! outside the solid, one that falls off a back edge is inside. The tree keeps only planes:
//! the polygons it is built from decide its shape, and the polygons clipped against it are
//! the solids' own, so the cuts made while building never reach a result.

use crate::CsgError;
use crate::MAX_POLYGONS;
use crate::geom::{EPSILON, Plane, Polygon, Split, split};
use glam::DVec3;

/// No child.
const NONE: u32 = u32::MAX;

#[derive(Debug)]
struct Node {
    plane: Plane,
    front: u32,
    back: u32,
}

/// Polygons further than this outside a solid's bounds are not in it (and cannot lie in
/// one of its planes where it has a face).
const MARGIN: f64 = 4.0 * EPSILON;

#[derive(Debug)]
pub(crate) struct Tree {
    /// The root is node 0 (when there is one).
    nodes: Vec<Node>,
    /// The bounds of the solid the tree was built from.
    lo: DVec3,
    hi: DVec3,
    /// Whether the tree classifies the solid's complement.
    inverted: bool,
}

fn too_complex() -> CsgError {
    CsgError::TooComplex {
        limit: MAX_POLYGONS,
    }
}

/// Smallest and largest coordinates of `polygon`'s corners.
fn polygon_bounds(polygon: &Polygon) -> (DVec3, DVec3) {
    polygon
        .vertices
        .iter()
        .fold((DVec3::INFINITY, DVec3::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(v.pos), hi.max(v.pos))
        })
}

impl Tree {
    /// The tree of a closed surface (with at least one polygon, and no more than
    /// [`MAX_POLYGONS`] fragments of them at any time while building).
    ///
    /// Every node is on the plane of the first polygon that reaches an empty place in the
    /// tree, so the tree follows the input order.
    pub fn new(polygons: &[Polygon], stop: &dyn Fn() -> bool) -> Result<Tree, CsgError> {
        let (mut lo, mut hi) = (DVec3::INFINITY, DVec3::NEG_INFINITY);
        for p in polygons {
            let (plo, phi) = polygon_bounds(p);
            lo = lo.min(plo);
            hi = hi.max(phi);
        }
        let mut tree = Tree {
            nodes: Vec::new(),
            lo,
            hi,
            inverted: false,
        };
        if polygons.len() > MAX_POLYGONS {
            return Err(too_complex());
        }
        let Some((first, rest)) = polygons.split_first() else {
            return Ok(tree);
        };
        // Polygons (fragments) waiting in `stack`.
        let mut live = rest.len();
        tree.nodes.push(Node {
            plane: first.plane,
            front: NONE,
            back: NONE,
        });
        let mut stack: Vec<(u32, Vec<Polygon>)> = vec![(0, rest.to_vec())];
        while let Some((index, list)) = stack.pop() {
            if stop() {
                return Err(CsgError::Interrupted);
            }
            live -= list.len();
            let plane = tree.nodes[index as usize].plane;
            let mut front = Vec::new();
            let mut back = Vec::new();
            for polygon in list {
                match split(&plane, polygon) {
                    // In the node's plane: nothing more to decide.
                    Split::CoplanarFront(_) | Split::CoplanarBack(_) => {}
                    Split::Front(p) => front.push(p),
                    Split::Back(p) => back.push(p),
                    Split::Spanning(f, b) => {
                        front.extend(f);
                        back.extend(b);
                    }
                }
            }
            for (mut list, is_front) in [(back, false), (front, true)] {
                if list.is_empty() {
                    continue;
                }
                // (The split that follows walks the whole list anyway.)
                let first = list.remove(0);
                let child = u32::try_from(tree.nodes.len())
                    .ok()
                    .filter(|&i| i != NONE)
                    .ok_or_else(too_complex)?;
                tree.nodes.push(Node {
                    plane: first.plane,
                    front: NONE,
                    back: NONE,
                });
                let node = &mut tree.nodes[index as usize];
                if is_front {
                    node.front = child;
                } else {
                    node.back = child;
                }
                if !list.is_empty() {
                    live += list.len();
                    stack.push((child, list));
                }
            }
            if live > MAX_POLYGONS {
                return Err(too_complex());
            }
        }
        Ok(tree)
    }

    /// Turns the tree into its solid's complement's: planes turned around, sides swapped.
    pub fn invert(&mut self) {
        for node in &mut self.nodes {
            node.plane = node.plane.flipped();
            std::mem::swap(&mut node.front, &mut node.back);
        }
        self.inverted = !self.inverted;
    }

    /// The parts of `polygons` outside the tree's solid. A part in one of the solid's face
    /// planes counts as outside when it faces the same way as that plane, inside otherwise.
    ///
    /// A polygon the clip leaves whole in area (even if cut into pieces along the way) comes
    /// out as itself, so only polygons the solid really cuts are fragmented. Results follow
    /// the order of `polygons`.
    pub fn clip(
        &self,
        polygons: &[Polygon],
        stop: &dyn Fn() -> bool,
    ) -> Result<Vec<Polygon>, CsgError> {
        if polygons.len() > MAX_POLYGONS {
            return Err(too_complex());
        }
        let (lo, hi) = (self.lo - MARGIN, self.hi + MARGIN);
        // Per input polygon: whether some part of it was inside (and so dropped).
        let mut lost = vec![false; polygons.len()];
        let mut kept: Vec<(usize, Polygon)> = Vec::new();
        let mut stack: Vec<(u32, Vec<(usize, Polygon)>)> = Vec::new();
        let mut routed = Vec::new();
        for (i, polygon) in polygons.iter().enumerate() {
            let (plo, phi) = polygon_bounds(polygon);
            let away = plo.cmpgt(hi).any() || phi.cmplt(lo).any();
            if self.nodes.is_empty() || away {
                // Clear of the solid: outside it (inside its complement).
                lost[i] = self.inverted && !self.nodes.is_empty();
            } else {
                routed.push((i, polygon.clone()));
            }
        }
        let mut live = routed.len();
        if !routed.is_empty() {
            stack.push((0, routed));
        }
        while let Some((index, list)) = stack.pop() {
            if stop() {
                return Err(CsgError::Interrupted);
            }
            let node = &self.nodes[index as usize];
            let mut front = Vec::new();
            let mut back = Vec::new();
            for (origin, polygon) in list {
                match split(&node.plane, polygon) {
                    Split::CoplanarFront(p) | Split::Front(p) => front.push((origin, p)),
                    Split::CoplanarBack(p) | Split::Back(p) => back.push((origin, p)),
                    Split::Spanning(f, b) => {
                        live -= 1;
                        if let Some(p) = f {
                            live += 1;
                            front.push((origin, p));
                        }
                        if let Some(p) = b {
                            live += 1;
                            back.push((origin, p));
                        }
                    }
                }
            }
            if live > MAX_POLYGONS {
                return Err(too_complex());
            }
            if node.back != NONE {
                stack.push((node.back, back));
            } else {
                live -= back.len();
                for (origin, _) in back {
                    lost[origin] = true;
                }
            }
            if node.front != NONE {
                stack.push((node.front, front));
            } else {
                kept.append(&mut front);
            }
        }
        // Stable: the pieces of one polygon keep the order they came out in.
        kept.sort_by_key(|&(origin, _)| origin);
        let mut out = Vec::with_capacity(polygons.len());
        let mut pieces = kept.into_iter().peekable();
        for (i, polygon) in polygons.iter().enumerate() {
            if !lost[i] {
                out.push(polygon.clone());
            }
            while let Some((_, piece)) = pieces.next_if(|&(origin, _)| origin == i) {
                if lost[i] {
                    out.push(piece);
                }
            }
        }
        Ok(out)
    }
}
