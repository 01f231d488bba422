//! Merging the fragments boolean operations leave: adjacent polygons in one plane, of one
//! color, that share an edge exactly (the two pieces of a split) become one polygon again
//! when the result is convex. A union of many overlapping solids (a sweep) otherwise keeps
//! every piece each cut made.

use crate::geom::{Polygon, Vertex};
use glam::DVec3;
use std::collections::HashMap;

/// Grid the plane and corner keys snap to (1e-6 studs, well inside the 1e-5 tolerance).
const SNAP: f64 = 1e6;

fn key(p: DVec3) -> [i64; 3] {
    p.to_array().map(|x| (x * SNAP).round() as i64)
}

fn plane_key(p: &Polygon) -> ([i64; 3], i64, [u32; 4]) {
    (
        key(p.plane.normal),
        (p.plane.w * SNAP).round() as i64,
        p.color.map(f32::to_bits),
    )
}

/// Whether the corners turn one way (collinear corners allowed) around `normal`.
fn convex(vertices: &[Vertex], normal: DVec3) -> bool {
    let n = vertices.len();
    (0..n).all(|i| {
        let (a, b, c) = (
            vertices[i].pos,
            vertices[(i + 1) % n].pos,
            vertices[(i + 2) % n].pos,
        );
        let turn = (b - a).cross(c - b).dot(normal);
        let scale = (b - a).length() * (c - b).length();
        turn >= -1e-9 * scale
    })
}

/// `a` and `b` joined across the edge `a[i]→a[i+1]` = `b[j+1]→b[j]`.
fn join(a: &[Vertex], i: usize, b: &[Vertex], j: usize) -> Vec<Vertex> {
    let (na, nb) = (a.len(), b.len());
    let mut out = Vec::with_capacity(na + nb - 2);
    // a from a[i+1] round to a[i], then b strictly between b[j+1] and b[j].
    for k in 0..na {
        out.push(a[(i + 1 + k) % na]);
    }
    for k in 0..nb - 2 {
        out.push(b[(j + 2 + k) % nb]);
    }
    out
}

/// The polygons with every mergeable pair merged, in a deterministic order (groups by first
/// polygon, merged polygons where their first piece was).
pub(crate) fn merge_coplanar(polygons: Vec<Polygon>) -> Vec<Polygon> {
    // How many polygons have a corner at each (snapped) position.
    let mut uses: HashMap<[i64; 3], u32> = HashMap::new();
    for p in &polygons {
        for v in &p.vertices {
            *uses.entry(key(v.pos)).or_insert(0) += 1;
        }
    }
    // Groups of one plane and color, in order of first appearance.
    let mut group_of: HashMap<([i64; 3], i64, [u32; 4]), usize> = HashMap::new();
    let mut groups: Vec<Vec<Option<Polygon>>> = Vec::new();
    for p in polygons {
        let g = *group_of.entry(plane_key(&p)).or_insert_with(|| {
            groups.push(Vec::new());
            groups.len() - 1
        });
        groups[g].push(Some(p));
    }
    let mut out = Vec::new();
    for mut group in groups {
        loop {
            // Directed edges (snapped corners) → (polygon, corner index).
            let mut edges: HashMap<([i64; 3], [i64; 3]), (usize, usize)> = HashMap::new();
            for (pi, p) in group.iter().enumerate() {
                let Some(p) = p else { continue };
                let n = p.vertices.len();
                for i in 0..n {
                    let e = (key(p.vertices[i].pos), key(p.vertices[(i + 1) % n].pos));
                    edges.entry(e).or_insert((pi, i));
                }
            }
            // Each polygon takes part in one merge per pass (the map is of the pass's start).
            let mut touched = vec![false; group.len()];
            let mut merged_any = false;
            for pi in 0..group.len() {
                if touched[pi] {
                    continue;
                }
                let Some(a) = group[pi].as_ref() else {
                    continue;
                };
                let n = a.vertices.len();
                let mut joined = None;
                let mut shared = 0;
                for i in 0..n {
                    let e = (key(a.vertices[(i + 1) % n].pos), key(a.vertices[i].pos));
                    let Some(&(qi, j)) = edges.get(&e) else {
                        continue;
                    };
                    if qi == pi || touched[qi] {
                        continue;
                    }
                    let Some(b) = group[qi].as_ref() else {
                        continue;
                    };
                    let vertices = join(&a.vertices, i, &b.vertices, j);
                    if convex(&vertices, a.plane.normal) {
                        joined = Some((qi, vertices));
                        shared = i;
                        break;
                    }
                }
                if let Some((qi, vertices)) = joined {
                    group[qi] = None;
                    if let Some(a) = group[pi].as_mut() {
                        // The shared edge's two ends were corners of both pieces.
                        let n = a.vertices.len();
                        for end in [a.vertices[shared], a.vertices[(shared + 1) % n]] {
                            if let Some(u) = uses.get_mut(&key(end.pos)) {
                                *u -= 1;
                            }
                        }
                        a.vertices = vertices;
                        // Split points on the new polygon's edges that nothing else needs.
                        drop_lone_collinear(a, &mut uses);
                    }
                    touched[pi] = true;
                    touched[qi] = true;
                    merged_any = true;
                }
            }
            if !merged_any {
                break;
            }
        }
        out.extend(group.into_iter().flatten());
    }
    for p in &mut out {
        drop_lone_collinear(p, &mut uses);
    }
    out
}

/// Removes the corners of `p` that lie on the straight line through their neighbours and
/// belong to no other polygon (split points left inside an edge): each only adds a
/// degenerate triangle, and no neighbour needs it, so no T-junction is made.
fn drop_lone_collinear(p: &mut Polygon, uses: &mut HashMap<[i64; 3], u32>) {
    let mut i = 0;
    while p.vertices.len() > 3 && i < p.vertices.len() {
        let n = p.vertices.len();
        let (a, b, c) = (
            p.vertices[(i + n - 1) % n].pos,
            p.vertices[i].pos,
            p.vertices[(i + 1) % n].pos,
        );
        let cross = (b - a).cross(c - b).length();
        let k = key(b);
        if uses.get(&k) == Some(&1) && cross <= 1e-9 * (b - a).length() * (c - b).length() {
            p.vertices.remove(i);
            uses.insert(k, 0);
        } else {
            i += 1;
        }
    }
}
