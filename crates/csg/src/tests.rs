use super::*;
use glam::DQuat;
use procmodel_mesh::shapes::{Shape, build};
use proptest::prelude::*;

const GREY: [f32; 4] = [0.5, 0.5, 0.5, 1.0];
const RED: [f32; 4] = [1.0, 0.0, 0.0, 1.0];

fn block(size: [f64; 3], center: [f64; 3]) -> Solid {
    block_placed(size, DAffine3::from_translation(DVec3::from(center)), GREY)
}

fn block_placed(size: [f64; 3], transform: DAffine3, color: [f32; 4]) -> Solid {
    let mesh = build(Shape::Block, DVec3::from(size).as_vec3(), 1);
    Solid::from_shape(&mesh, transform, color)
}

/// The divergence theorem over a mesh's triangles, about `origin`: independent of
/// `Solid::volume` (f32 corners, triangles, another origin).
fn mesh_volume(mesh: &TriangleMesh, origin: DVec3) -> f64 {
    mesh.triangles
        .iter()
        .map(|t| {
            let [a, b, c] = t
                .vertices
                .map(|i| Vec3::from_array(mesh.positions[i as usize]).as_dvec3() - origin);
            a.dot(b.cross(c)) / 6.0
        })
        .sum()
}

/// The sum of the triangles' area vectors: zero for a closed surface.
fn vector_area(mesh: &TriangleMesh) -> (DVec3, f64) {
    let mut sum = DVec3::ZERO;
    let mut total = 0.0;
    for t in &mesh.triangles {
        let [a, b, c] = t
            .vertices
            .map(|i| Vec3::from_array(mesh.positions[i as usize]).as_dvec3());
        let area = (b - a).cross(c - a) * 0.5;
        sum += area;
        total += area.length();
    }
    (sum, total)
}

fn close(a: f64, b: f64, tolerance: f64) -> bool {
    (a - b).abs() <= tolerance
}

/// Checks the solid's triangle mesh is a closed, outward surface enclosing the solid's
/// volume; returns that volume.
fn closed_volume(solid: &Solid) -> f64 {
    let mesh = solid.to_triangle_mesh();
    let v = solid.volume();
    let tolerance = 1e-4 * v.abs().max(1.0);
    let at_origin = mesh_volume(&mesh, DVec3::ZERO);
    let elsewhere = mesh_volume(&mesh, DVec3::new(7.25, -3.5, 11.0));
    assert!(
        close(at_origin, v, tolerance),
        "mesh {at_origin} vs solid {v}"
    );
    // A closed surface encloses the same volume seen from any point.
    assert!(
        close(elsewhere, v, tolerance),
        "about another point {elsewhere} vs {v}"
    );
    let (sum, total) = vector_area(&mesh);
    assert!(
        sum.length() <= 1e-5 * total.max(1.0),
        "open surface: {sum} of {total}"
    );
    if !solid.is_empty() {
        assert!(v > 0.0, "inside out: {v}");
    }
    v
}

#[test]
fn a_unit_box_has_volume_one_and_its_bounds() {
    let b = block([1.0; 3], [0.0; 3]);
    assert_eq!(b.polygon_count(), 12);
    assert!(close(closed_volume(&b), 1.0, 1e-12));
    assert_eq!(b.bounds(), Some((DVec3::splat(-0.5), DVec3::splat(0.5))));
    assert_eq!(Solid::default().bounds(), None);
    assert_eq!(Solid::default().volume(), 0.0);
    let moved = block([1.0, 2.0, 3.0], [5.0, -1.0, 2.0]);
    assert!(close(closed_volume(&moved), 6.0, 1e-12));
}

#[test]
fn a_box_minus_a_box_inside_it_keeps_56() {
    let outer = block([4.0; 3], [0.0; 3]);
    let inner = block([2.0; 3], [0.3, -0.2, 0.1]);
    let r = outer.subtract(&inner).unwrap();
    assert!(close(closed_volume(&r), 56.0, 1e-9));
    // The cavity's surface (facing inward) belongs to the box around it.
    let bodies = r.split_apart();
    assert_eq!(bodies.len(), 1);
    assert_eq!(bodies[0], r);
    // A block floating in the cavity is a body of its own; the cavity stays with the
    // innermost body around it.
    let floating = r.union(&block([1.0; 3], [0.3, -0.2, 0.1])).unwrap();
    assert!(close(closed_volume(&floating), 57.0, 1e-9));
    let bodies = floating.split_apart();
    assert_eq!(bodies.len(), 2);
    assert!(close(closed_volume(&bodies[0]), 56.0, 1e-9));
    assert!(close(closed_volume(&bodies[1]), 1.0, 1e-9));
    // Nested: a hollow block in the cavity keeps its own cavity.
    let hollow = block([1.5; 3], [0.3, -0.2, 0.1])
        .subtract(&block([0.5; 3], [0.3, -0.2, 0.1]))
        .unwrap();
    let nested = r.union(&hollow).unwrap();
    let bodies = nested.split_apart();
    assert_eq!(bodies.len(), 2);
    assert!(close(closed_volume(&bodies[0]), 56.0, 1e-9));
    assert!(close(closed_volume(&bodies[1]), 3.375 - 0.125, 1e-9));
    assert_eq!(
        bodies[0].polygon_count() + bodies[1].polygon_count(),
        nested.polygon_count()
    );
}

#[test]
fn a_box_minus_a_bar_through_it_keeps_48() {
    let outer = block([4.0; 3], [0.0; 3]);
    for bar in [[2.0, 2.0, 10.0], [10.0, 2.0, 2.0], [2.0, 10.0, 2.0]] {
        let r = outer.subtract(&block(bar, [0.0; 3])).unwrap();
        assert!(close(closed_volume(&r), 48.0, 1e-9), "{bar:?}");
        assert_eq!(r.split_apart().len(), 1);
    }
}

#[test]
fn overlapping_boxes_union_to_12_and_intersect_to_4() {
    let a = block([2.0; 3], [0.0; 3]);
    let b = block([2.0; 3], [1.0, 0.0, 0.0]);
    let u = a.union(&b).unwrap();
    assert!(close(closed_volume(&u), 12.0, 1e-9));
    assert_eq!(
        u.bounds(),
        Some((DVec3::new(-1.0, -1.0, -1.0), DVec3::new(2.0, 1.0, 1.0)))
    );
    let i = a.intersect(&b).unwrap();
    assert!(close(closed_volume(&i), 4.0, 1e-9));
    assert_eq!(
        i.bounds(),
        Some((DVec3::new(0.0, -1.0, -1.0), DVec3::new(1.0, 1.0, 1.0)))
    );
    let d = a.subtract(&b).unwrap();
    assert!(close(closed_volume(&d), 4.0, 1e-9));
    // The operations agree whichever way round.
    assert!(close(b.union(&a).unwrap().volume(), 12.0, 1e-9));
    assert!(close(b.intersect(&a).unwrap().volume(), 4.0, 1e-9));
}

#[test]
fn disjoint_and_swallowing_cases_are_empty_or_unchanged() {
    let a = block([2.0; 3], [0.0; 3]);
    let far = block([2.0; 3], [5.0, 0.0, 0.0]);
    // Near enough that the bounds test does not decide it: the trees must.
    let near = block([2.0; 3], [2.5, 0.5, 0.0]);
    for other in [&far, &near] {
        assert!(a.intersect(other).unwrap().is_empty());
        assert!(close(a.subtract(other).unwrap().volume(), 8.0, 1e-9));
        let u = a.union(other).unwrap();
        assert!(close(closed_volume(&u), 16.0, 1e-9));
        assert_eq!(u.split_apart().len(), 2);
    }
    let big = block([3.0; 3], [0.1, 0.0, -0.2]);
    assert!(a.subtract(&big).unwrap().is_empty());
    assert!(close(a.union(&big).unwrap().volume(), 27.0, 1e-9));
    assert!(close(a.intersect(&big).unwrap().volume(), 8.0, 1e-9));
    let empty = Solid::default();
    assert!(a.intersect(&empty).unwrap().is_empty());
    assert!(empty.intersect(&a).unwrap().is_empty());
    assert!(empty.subtract(&a).unwrap().is_empty());
    assert_eq!(a.subtract(&empty).unwrap(), a);
    assert_eq!(a.union(&empty).unwrap(), a);
    assert_eq!(empty.union(&a).unwrap(), a);
}

#[test]
fn boxes_sharing_a_face_union_without_the_face_between_them() {
    let a = block([1.0; 3], [0.0; 3]);
    let on_top = block([1.0; 3], [0.0, 1.0, 0.0]);
    let u = a.union(&on_top).unwrap();
    assert!(close(closed_volume(&u), 2.0, 1e-12));
    let mesh = u.to_triangle_mesh();
    let inner = mesh.triangles.iter().any(|t| {
        t.vertices
            .iter()
            .all(|&v| (mesh.positions[v as usize][1] - 0.5).abs() < 1e-6)
    });
    assert!(!inner, "the shared face stayed inside the union");
    assert_eq!(u.split_apart().len(), 1);
    // Touching is not overlapping.
    assert!(a.intersect(&on_top).unwrap().volume().abs() < 1e-12);
    assert!(close(a.subtract(&on_top).unwrap().volume(), 1.0, 1e-12));
    // Side by side, flush on four faces and sharing one.
    let beside = block([1.0; 3], [1.0, 0.0, 0.0]);
    assert!(close(closed_volume(&a.union(&beside).unwrap()), 2.0, 1e-12));
    // A smaller box on the face: the face is shared in part.
    let small = block([0.5, 1.0, 0.5], [0.1, 1.0, -0.2]);
    assert!(close(closed_volume(&a.union(&small).unwrap()), 1.25, 1e-12));
}

#[test]
fn cuts_flush_with_faces_remove_exactly_their_volume() {
    let outer = block([4.0; 3], [0.0; 3]);
    // Flush with the top face only.
    let top = outer.subtract(&block([2.0; 3], [0.0, 1.0, 0.0])).unwrap();
    assert!(close(closed_volume(&top), 56.0, 1e-9));
    // Flush with three faces (a corner notch).
    let corner = outer.subtract(&block([2.0; 3], [1.0, 1.0, 1.0])).unwrap();
    assert!(close(closed_volume(&corner), 56.0, 1e-9));
    // Flush with five faces: the top quarter sliced off.
    let slice = outer
        .subtract(&block([4.0, 1.0, 4.0], [0.0, 1.5, 0.0]))
        .unwrap();
    assert!(close(closed_volume(&slice), 48.0, 1e-9));
    assert_eq!(
        slice.bounds(),
        Some((DVec3::splat(-2.0), DVec3::new(2.0, 1.0, 2.0)))
    );
    // A window as deep as the wall: flush with both faces.
    let wall = block([6.0, 4.0, 1.0], [0.0; 3]);
    let window = wall.subtract(&block([2.0, 2.0, 1.0], [0.0; 3])).unwrap();
    assert!(close(closed_volume(&window), 20.0, 1e-9));
    assert_eq!(window.split_apart().len(), 1);
    // The same, intersected: exactly the window's block.
    let plug = wall.intersect(&block([2.0, 2.0, 1.0], [0.0; 3])).unwrap();
    assert!(close(closed_volume(&plug), 4.0, 1e-9));
}

#[test]
fn a_box_minus_a_slab_falls_apart_in_two() {
    let b = block([4.0; 3], [0.0; 3]);
    let cut = b
        .subtract(&block([6.0, 1.0, 6.0], [0.0, 0.5, 0.0]))
        .unwrap();
    let whole = closed_volume(&cut);
    assert!(close(whole, 48.0, 1e-9));
    let bodies = cut.split_apart();
    assert_eq!(bodies.len(), 2);
    let volumes: Vec<f64> = bodies.iter().map(closed_volume).collect();
    assert!(close(volumes[0] + volumes[1], whole, 1e-9));
    assert!(close(volumes[0] + volumes[1], 48.0, 1e-9));
    // Above (y from 1 to 2) is 16, below (−2 to 0) 32.
    let mut sorted = volumes.clone();
    sorted.sort_by(f64::total_cmp);
    assert!(
        close(sorted[0], 16.0, 1e-9) && close(sorted[1], 32.0, 1e-9),
        "{volumes:?}"
    );
    let polygons: usize = bodies.iter().map(Solid::polygon_count).sum();
    assert_eq!(polygons, cut.polygon_count());
    // The first body holds the first polygon.
    assert_eq!(bodies[0].polygons[0], cut.polygons[0]);
}

#[test]
fn a_ball_cut_by_a_box_keeps_half_its_volume_and_its_smooth_normals() {
    let ball_mesh = build(Shape::Ball, Vec3::splat(4.0), 24);
    let ball = Solid::from_shape(&ball_mesh, DAffine3::IDENTITY, RED);
    let ball_volume = closed_volume(&ball);
    // The polyhedron is a little less than the sphere's 4/3 π 2³.
    assert!(ball_volume < 33.52 && ball_volume > 30.0, "{ball_volume}");
    let upper = block([6.0, 3.0, 6.0], [0.0, 1.5, 0.0]);
    let half = ball.intersect(&upper).unwrap();
    let v = closed_volume(&half);
    assert!(
        close(v, ball_volume / 2.0, 1e-6 * ball_volume),
        "{v} of {ball_volume}"
    );
    let (lo, hi) = half.bounds().unwrap();
    assert!(lo.y.abs() < 1e-6 && close(hi.y, 2.0, 1e-6), "{lo} {hi}");
    // Cut above the equator (through the rings): the two parts make the whole, the curved
    // part keeps the ball's normals (radial, so interpolated ones too), the cut face the
    // box's (−Y).
    let high = block([6.0, 3.0, 6.0], [0.0, 1.8, 0.0]);
    let cap = ball.intersect(&high).unwrap();
    let below = ball.subtract(&high).unwrap();
    let (vc, vb) = (closed_volume(&cap), closed_volume(&below));
    assert!(
        close(vc + vb, ball_volume, 1e-6 * ball_volume),
        "{vc} + {vb}"
    );
    let mut curved = 0;
    let mut cut = 0;
    for p in &cap.polygons {
        for v in &p.vertices {
            assert!(close(v.normal.length(), 1.0, 1e-12), "{v:?}");
            if p.color == RED {
                assert!(v.normal.dot(v.pos.normalize()) > 0.9999, "{v:?}");
                curved += 1;
                cut += usize::from((v.pos.y - 0.3).abs() < 1e-9);
            } else {
                assert!(close(v.normal.y, -1.0, 1e-12), "{v:?}");
            }
        }
    }
    assert!(curved > 100 && cut > 10, "{curved} {cut}");
    // The same cut as a subtraction of the lower half.
    let lower = block([6.0, 3.0, 6.0], [0.0, -1.5, 0.0]);
    let rest = ball.subtract(&lower).unwrap();
    assert!(close(
        closed_volume(&rest),
        ball_volume / 2.0,
        1e-6 * ball_volume
    ));
}

/// 40×20×1 wall minus 10 doors flush with its bottom and 20 windows; every other opening
/// exactly as deep as the wall (flush with both faces), the rest passing through.
fn wall_openings() -> (Solid, Vec<Solid>, f64) {
    let wall = block([40.0, 20.0, 1.0], [0.0; 3]);
    let mut openings = Vec::new();
    let mut removed = 0.0;
    for column in 0..10 {
        let x = -18.0 + 4.0 * column as f64;
        for (row, (y, height)) in [(-7.0, 6.0), (0.0, 3.0), (6.0, 3.0)]
            .into_iter()
            .enumerate()
        {
            let depth = if (column + row) % 2 == 0 { 1.0 } else { 3.0 };
            openings.push(block([2.0, height, depth], [x, y, 0.0]));
            removed += 2.0 * height;
        }
    }
    (wall, openings, 800.0 - removed)
}

#[test]
fn a_wall_with_thirty_openings_has_the_right_volume() {
    let (wall, openings, expected) = wall_openings();
    assert_eq!(openings.len(), 30);
    let mut cut = wall.clone();
    for opening in &openings {
        cut = cut.subtract(opening).unwrap();
    }
    assert!(
        close(closed_volume(&cut), expected, 1e-7 * expected),
        "{}",
        cut.volume()
    );
    assert_eq!(cut.split_apart().len(), 1);
    // All at once: the openings' union subtracted.
    let mut all = Solid::default();
    for opening in &openings {
        all = all.union(opening).unwrap();
    }
    let at_once = wall.subtract(&all).unwrap();
    assert!(close(closed_volume(&at_once), expected, 1e-7 * expected));
    // The openings' planes cut the wall's faces into strips, not a blow-up (354 when written).
    assert!(cut.polygon_count() < 1_000, "{}", cut.polygon_count());
}

#[test]
fn the_same_operation_gives_the_same_bits() {
    let run = || {
        let (wall, openings, _) = wall_openings();
        let mut cut = wall;
        for opening in openings.iter().take(8) {
            cut = cut.subtract(opening).unwrap();
        }
        let ball = Solid::from_shape(
            &build(Shape::Ball, Vec3::splat(6.0), 16),
            DAffine3::from_translation(DVec3::new(3.0, 9.0, 0.2)),
            RED,
        );
        cut.union(&ball).unwrap().to_triangle_mesh()
    };
    let first = run();
    let second = run();
    assert_eq!(first, second);
    assert_eq!(first.encode(), second.encode());
}

#[test]
fn the_triangle_mesh_is_valid_and_survives_encoding() {
    let a = block([2.0; 3], [0.0; 3]);
    let ball = Solid::from_shape(
        &build(Shape::Ball, Vec3::splat(2.0), 12),
        DAffine3::from_translation(DVec3::new(1.0, 0.5, 0.0)),
        RED,
    );
    let r = a.subtract(&ball).unwrap();
    let mesh = r.to_triangle_mesh();
    assert!(!mesh.triangles.is_empty());
    assert_eq!(mesh.uvs, vec![[0.0, 0.0]]);
    for t in &mesh.triangles {
        assert!(
            t.vertices
                .iter()
                .all(|&i| (i as usize) < mesh.positions.len())
        );
        assert!(t.normals.iter().all(|&i| (i as usize) < mesh.normals.len()));
        assert!(t.colors.iter().all(|&i| (i as usize) < mesh.colors.len()));
        assert_eq!(t.uvs, [0; 3]);
    }
    // Deduplicated: no two entries share their bits.
    let mut bits: Vec<[u32; 3]> = mesh.positions.iter().map(|p| p.map(f32::to_bits)).collect();
    bits.sort();
    bits.dedup();
    assert_eq!(bits.len(), mesh.positions.len());
    assert_eq!(mesh.colors.len(), 2);
    assert_eq!(TriangleMesh::decode(&mesh.encode()).unwrap(), mesh);
    // Back into a solid: the same volume, the colors kept per face, or replaced.
    let again = Solid::from_triangle_mesh(&mesh, DAffine3::IDENTITY, None);
    assert!(close(closed_volume(&again), r.volume(), 1e-5));
    assert!(again.polygons.iter().any(|p| p.color == RED));
    assert!(again.polygons.iter().any(|p| p.color == GREY));
    let blue = Solid::from_triangle_mesh(&mesh, DAffine3::IDENTITY, Some([0.0, 0.0, 1.0, 1.0]));
    assert!(
        blue.polygons
            .iter()
            .all(|p| p.color == [0.0, 0.0, 1.0, 1.0])
    );
    assert_eq!(Solid::default().to_triangle_mesh(), TriangleMesh::default());
}

#[test]
fn transforms_move_scale_and_mirror_without_turning_inside_out() {
    let b = block([1.0, 2.0, 3.0], [0.0; 3]);
    let scaled = b.transformed(DAffine3::from_scale(DVec3::new(2.0, 1.0, 0.5)));
    assert!(close(closed_volume(&scaled), 6.0, 1e-12));
    let mirrored = b.transformed(DAffine3::from_scale(DVec3::new(-1.0, 1.0, 1.0)));
    assert!(close(closed_volume(&mirrored), 6.0, 1e-12));
    let turn = DAffine3::from_rotation_translation(
        DQuat::from_axis_angle(DVec3::new(1.0, 2.0, 3.0).normalize(), 0.7),
        DVec3::new(1.0, -2.0, 3.0),
    );
    let moved = b.transformed(turn);
    assert!(close(closed_volume(&moved), 6.0, 1e-9));
    // The same as placing the shape there in the first place.
    let placed = block_placed([1.0, 2.0, 3.0], turn, GREY);
    assert!(close(placed.volume(), 6.0, 1e-9));
    let (lo, hi) = moved.bounds().unwrap();
    let (plo, phi) = placed.bounds().unwrap();
    assert!(lo.abs_diff_eq(plo, 1e-12) && hi.abs_diff_eq(phi, 1e-12));
    // Normals follow: a box face's normals stay its plane's.
    for p in &moved.polygons {
        for v in &p.vertices {
            assert!(v.normal.abs_diff_eq(p.plane.normal, 1e-12));
        }
    }
    // Mirrored placement keeps outward winding too.
    let mirror_placed = block_placed(
        [1.0, 2.0, 3.0],
        DAffine3::from_scale(DVec3::new(1.0, -1.0, 1.0)),
        GREY,
    );
    assert!(close(closed_volume(&mirror_placed), 6.0, 1e-12));
    // A flattening transform leaves nothing.
    assert!(
        b.transformed(DAffine3::from_scale(DVec3::new(1.0, 0.0, 1.0)))
            .is_empty()
    );
    assert!(
        b.transformed(DAffine3::from_translation(DVec3::splat(f64::NAN)))
            .is_empty()
    );
}

#[test]
fn bad_input_triangles_are_skipped() {
    let mut mesh = block([1.0; 3], [0.0; 3]).to_triangle_mesh();
    let good = mesh.triangles.len();
    let nan = mesh.positions.len() as u32;
    mesh.positions.push([f32::NAN, 0.0, 0.0]);
    let zero_normal = mesh.normals.len() as u32;
    mesh.normals.push([0.0; 3]);
    let t = mesh.triangles[0];
    mesh.triangles.push(Triangle {
        vertices: [t.vertices[0], t.vertices[1], nan],
        ..t
    });
    // No area.
    mesh.triangles.push(Triangle {
        vertices: [t.vertices[0], t.vertices[0], t.vertices[1]],
        ..t
    });
    // Out of range.
    mesh.triangles.push(Triangle {
        vertices: [t.vertices[0], t.vertices[1], 999],
        ..t
    });
    // A zero normal and a normal/color out of range: kept, with the face normal and white.
    mesh.triangles[1].normals = [zero_normal, 999, zero_normal];
    mesh.triangles[1].colors = [999; 3];
    let s = Solid::from_triangle_mesh(&mesh, DAffine3::IDENTITY, None);
    assert_eq!(s.polygon_count(), good);
    assert!(close(closed_volume(&s), 1.0, 1e-12));
    let p = &s.polygons[1];
    assert!(p.vertices.iter().all(|v| v.normal == p.plane.normal));
    assert_eq!(p.color, [1.0; 4]);
    // Shapes with bad indices or a degenerate size.
    let mut data = build(Shape::Block, Vec3::ONE, 1);
    data.indices.extend([0, 1, 500]);
    assert_eq!(
        Solid::from_shape(&data, DAffine3::IDENTITY, GREY).polygon_count(),
        12
    );
    let flat = build(Shape::Block, Vec3::new(1.0, 0.0, 1.0), 1);
    let flat = Solid::from_shape(&flat, DAffine3::IDENTITY, GREY);
    // Only the top and bottom faces remain (coincident, opposite): no volume.
    assert_eq!(flat.volume(), 0.0);
    let nan = DAffine3::from_translation(DVec3::new(f64::NAN, 0.0, 0.0));
    assert!(Solid::from_shape(&data, nan, GREY).is_empty());
    // Operations on such solids do not panic.
    let b = block([1.0; 3], [0.0; 3]);
    let _ = flat.union(&b).unwrap();
    let _ = b.subtract(&flat).unwrap();
    let _ = b.intersect(&flat).unwrap();
}

#[test]
fn operations_past_the_limit_fail_instead_of_growing() {
    // 2 × 460 × 229 ≈ 210,000 triangles: more than one operation may hold.
    let ball = Solid::from_shape(
        &build(Shape::Ball, Vec3::splat(4.0), 460),
        DAffine3::IDENTITY,
        RED,
    );
    assert!(ball.polygon_count() > MAX_POLYGONS);
    let b = block([1.0; 3], [0.0; 3]);
    let err = CsgError::TooComplex {
        limit: MAX_POLYGONS,
    };
    assert_eq!(ball.union(&b), Err(err.clone()));
    assert_eq!(b.subtract(&ball), Err(err.clone()));
    assert_eq!(b.intersect(&ball), Err(err));
    assert_eq!(
        CsgError::TooComplex { limit: 5 }.to_string(),
        "the solid grew to more than 5 polygons"
    );
}

fn any_box() -> impl Strategy<Value = (Solid, f64)> {
    (
        [0.3f64..4.0, 0.3..4.0, 0.3..4.0],
        [-1.5f64..1.5, -1.5..1.5, -1.5..1.5],
        (
            -1.0f64..1.0,
            0.0..std::f64::consts::TAU,
            0.0..std::f64::consts::TAU,
        ),
    )
        .prop_map(|(size, center, (z, phi, angle))| {
            let r = (1.0 - z * z).sqrt();
            let axis = DVec3::new(r * phi.cos(), r * phi.sin(), z);
            let rotation = DQuat::from_axis_angle(axis.normalize(), angle);
            let transform = DAffine3::from_rotation_translation(rotation, DVec3::from(center));
            // The block is built from f32 sizes.
            let f = DVec3::from(size).as_vec3().as_dvec3();
            (block_placed(size, transform, GREY), f.x * f.y * f.z)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn volumes_obey_inclusion_exclusion((a, va) in any_box(), (b, vb) in any_box()) {
        prop_assert!(close(a.volume(), va, 1e-9 * va));
        prop_assert!(close(b.volume(), vb, 1e-9 * vb));
        let scale = va + vb;
        let tolerance = 1e-4 * scale;
        let u = a.union(&b).unwrap();
        let i = a.intersect(&b).unwrap();
        let d = a.subtract(&b).unwrap();
        let (vu, vi, vd) = (closed_volume(&u), closed_volume(&i), closed_volume(&d));
        prop_assert!(close(vu, va + vb - vi, tolerance), "union {} vs {}", vu, va + vb - vi);
        prop_assert!(close(vd, va - vi, tolerance), "difference {} vs {}", vd, va - vi);
        prop_assert!(vi >= -tolerance && vi <= va.min(vb) + tolerance, "intersection {}", vi);
        // The other way round.
        let d2 = b.subtract(&a).unwrap();
        prop_assert!(close(closed_volume(&d2), vb - vi, tolerance));
        prop_assert!(close(b.intersect(&a).unwrap().volume(), vi, tolerance));
    }
}

#[test]
fn a_row_of_balls_unions_without_fragmenting_the_rest() {
    let ball_mesh = build(Shape::Ball, Vec3::splat(4.0), 24);
    let one = Solid::from_shape(&ball_mesh, DAffine3::IDENTITY, RED).polygon_count();
    let mut row = Solid::default();
    for k in 0..8 {
        let at = DVec3::new(3.0 * f64::from(k), 0.3 * f64::from(k % 3), 0.0);
        let ball = Solid::from_shape(&ball_mesh, DAffine3::from_translation(at), RED);
        row = row.union(&ball).unwrap();
    }
    closed_volume(&row);
    // Each ball is cut only where it meets its neighbours (about 800 polygons a ball when
    // written; re-splitting earlier results would grow it quadratically).
    assert!(
        row.polygon_count() < 8 * one * 2,
        "{} of {one}",
        row.polygon_count()
    );
    assert_eq!(row.split_apart().len(), 1);
}

/// Merging in a balanced order gives the solid merging one by one gives: the same volume
/// and bodies, for overlapping and disjoint neighbours alike; and subtracting the cutters'
/// union is subtracting them one by one.
#[test]
fn union_all_is_the_union_one_by_one() {
    let ball_mesh = build(Shape::Ball, Vec3::splat(4.0), 24);
    let balls: Vec<Solid> = (0..7)
        .map(|k| {
            // Neighbours overlap, except across the gap after the fourth.
            let x = 3.0 * f64::from(k) + if k > 3 { 5.0 } else { 0.0 };
            Solid::from_shape(
                &ball_mesh,
                DAffine3::from_translation(DVec3::new(x, 0.0, 0.0)),
                RED,
            )
        })
        .collect();
    let mut chained = Solid::default();
    for b in &balls {
        chained = chained.union(b).unwrap();
    }
    let all = Solid::union_all(balls.clone(), &|| false).unwrap();
    let (va, vc) = (closed_volume(&all), closed_volume(&chained));
    // Cut in another order: the same solid up to rounding.
    assert!(close(va, vc, 1e-6 * vc), "{va} vs {vc}");
    assert_eq!(all.split_apart().len(), 2);
    assert_eq!(chained.split_apart().len(), 2);
    assert!(Solid::union_all(Vec::new(), &|| false).unwrap().is_empty());

    let (wall, openings, expected) = wall_openings();
    let cutters = Solid::union_all(openings, &|| false).unwrap();
    let cut = wall.subtract(&cutters).unwrap();
    assert!(
        close(closed_volume(&cut), expected, 1e-6),
        "{}",
        closed_volume(&cut)
    );
}

/// A `stop` that says stop ends an operation with `Interrupted`, whatever its size; one that
/// never does changes nothing.
#[test]
fn an_operation_stops_when_asked() {
    let a = block([4.0, 4.0, 4.0], [0.0; 3]);
    let b = block([2.0, 2.0, 10.0], [0.0; 3]);
    let asked = std::cell::Cell::new(0u32);
    let stop = || {
        asked.set(asked.get() + 1);
        true
    };
    assert_eq!(a.union_until(&b, &stop), Err(CsgError::Interrupted));
    assert_eq!(a.subtract_until(&b, &stop), Err(CsgError::Interrupted));
    assert_eq!(a.intersect_until(&b, &stop), Err(CsgError::Interrupted));
    assert_eq!(
        Solid::union_all(vec![a.clone(), b.clone()], &stop),
        Err(CsgError::Interrupted)
    );
    assert!(asked.get() >= 4);
    assert_eq!(
        a.subtract_until(&b, &|| false).unwrap(),
        a.subtract(&b).unwrap()
    );
}

/// Axis-aligned boxes on a half-stud grid: faces are often exactly coplanar, edges and
/// corners coincide, and the volumes are known exactly.
fn grid_box() -> impl Strategy<Value = ([f64; 3], [f64; 3])> {
    ([1u8..=6, 1..=6, 1..=6], [-4i8..=4, -4..=4, -4..=4]).prop_map(|(size, low)| {
        let lo = low.map(|l| f64::from(l) * 0.5);
        let hi: [f64; 3] = std::array::from_fn(|k| lo[k] + f64::from(size[k]) * 0.5);
        (lo, hi)
    })
}

fn grid_solid((lo, hi): ([f64; 3], [f64; 3])) -> Solid {
    block(
        std::array::from_fn(|k| hi[k] - lo[k]),
        std::array::from_fn(|k| (hi[k] + lo[k]) * 0.5),
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn flush_grid_boxes_give_exact_volumes(a in grid_box(), b in grid_box()) {
        let volume = |(lo, hi): ([f64; 3], [f64; 3])| (0..3).map(|k| hi[k] - lo[k]).product::<f64>();
        let overlap: f64 = (0..3)
            .map(|k| (a.1[k].min(b.1[k]) - a.0[k].max(b.0[k])).max(0.0))
            .product();
        let (va, vb) = (volume(a), volume(b));
        let (sa, sb) = (grid_solid(a), grid_solid(b));
        let tolerance = 1e-9 * (va + vb);
        let u = closed_volume(&sa.union(&sb).unwrap());
        let i = closed_volume(&sa.intersect(&sb).unwrap());
        let d = closed_volume(&sa.subtract(&sb).unwrap());
        prop_assert!(close(u, va + vb - overlap, tolerance), "union {} vs {}", u, va + vb - overlap);
        prop_assert!(close(i, overlap, tolerance), "intersection {} vs {}", i, overlap);
        prop_assert!(close(d, va - overlap, tolerance), "difference {} vs {}", d, va - overlap);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]

    /// The wall and its openings turned and moved together: faces meant to be flush are
    /// coplanar only up to rounding now.
    #[test]
    fn a_turned_wall_keeps_its_volume(
        (z, phi, angle) in (-1.0f64..1.0, 0.0..std::f64::consts::TAU, 0.0..std::f64::consts::TAU),
        offset in [-50.0f64..50.0, -50.0..50.0, -50.0..50.0],
    ) {
        let r = (1.0 - z * z).sqrt();
        let axis = DVec3::new(r * phi.cos(), r * phi.sin(), z);
        let frame = DAffine3::from_rotation_translation(
            DQuat::from_axis_angle(axis.normalize(), angle),
            DVec3::from(offset),
        );
        let (wall, openings, expected) = wall_openings();
        let mut cut = wall.transformed(frame);
        for opening in &openings {
            cut = cut.subtract(&opening.transformed(frame)).unwrap();
        }
        let v = closed_volume(&cut);
        prop_assert!(close(v, expected, 1e-6 * expected), "{} vs {}", v, expected);
        prop_assert_eq!(cut.split_apart().len(), 1);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Any triangle soup (open, self-intersecting, degenerate, far away or tiny) goes through
    /// every operation without panicking, and what comes out is a mesh the decoder accepts.
    #[test]
    fn any_triangle_soup_survives_every_operation(
        corners in proptest::collection::vec(
            prop_oneof![
                [-3.0f32..3.0, -3.0..3.0, -3.0..3.0],
                Just([0.0f32, 0.0, 0.0]),
                [-1e-6f32..1e-6, -1e-6..1e-6, -1e-6..1e-6],
                [-1e6f32..1e6, -1e6..1e6, -1e6..1e6],
            ],
            3..60,
        )
    ) {
        let mut mesh = TriangleMesh {
            positions: corners,
            normals: vec![[0.0, 1.0, 0.0], [0.0; 3]],
            uvs: vec![[0.0, 0.0]],
            colors: vec![[1.0, 0.0, 0.0, 1.0]],
            ..TriangleMesh::default()
        };
        let n = mesh.positions.len() as u32;
        for k in 0..n / 3 {
            mesh.triangles.push(Triangle {
                vertices: [3 * k, 3 * k + 1, (3 * k + 2) % n],
                normals: [0, 1, k % 2],
                uvs: [0; 3],
                colors: [0; 3],
            });
        }
        let soup = Solid::from_triangle_mesh(&mesh, DAffine3::IDENTITY, None);
        let cube = block([2.0, 2.0, 2.0], [0.5, 0.0, 0.0]);
        for result in [
            soup.union(&cube),
            soup.subtract(&cube),
            cube.subtract(&soup),
            soup.intersect(&cube),
            Solid::union_all(vec![soup.clone(), cube.clone(), soup.clone()], &|| false),
        ] {
            let result = result.unwrap();
            for body in result.split_apart() {
                let out = body.to_triangle_mesh();
                prop_assert_eq!(TriangleMesh::decode(&out.encode()), Ok(out));
            }
        }
    }
}

// Convex hulls (the pieces of a sweep).

/// Whether every directed edge of the hull's triangles has its reverse (a closed surface).
fn hull_is_closed(triangles: &[[usize; 3]]) -> bool {
    let edges: std::collections::HashSet<(usize, usize)> = triangles
        .iter()
        .flat_map(|t| (0..3).map(move |k| (t[k], t[(k + 1) % 3])))
        .collect();
    edges.iter().all(|&(a, b)| edges.contains(&(b, a)))
}

#[test]
fn the_hull_of_a_cube_with_points_inside_is_the_cube() {
    let mut points = Vec::new();
    for i in 0..27 {
        // The 3×3×3 lattice on [-1, 1]³: 8 corners, the rest on faces, edges or inside.
        let c = |k: i32| f64::from(k % 3 - 1);
        points.push(DVec3::new(c(i), c(i / 3), c(i / 9)));
    }
    let triangles = hull::hull_triangles(&points).expect("a volume");
    assert!(hull_is_closed(&triangles));
    for t in &triangles {
        for &i in t {
            assert_eq!(
                points[i].abs(),
                DVec3::ONE,
                "only corners are hull vertices"
            );
        }
    }
    assert_eq!(triangles.len(), 12);
    let solid = Solid::convex_hull(&points, RED);
    assert!((solid.volume() - 8.0).abs() < 1e-9, "{}", solid.volume());
    // Faces 90° apart keep their own normals: the edges stay sharp.
    for p in &solid.polygons {
        for v in &p.vertices {
            assert!((v.normal - p.plane.normal).length() < 1e-12);
        }
        assert_eq!(p.color, RED);
    }
}

#[test]
fn the_hull_of_a_ball_is_round_and_shaded_smooth() {
    let ball = build(Shape::Ball, Vec3::splat(2.0), 24);
    let points: Vec<DVec3> = ball.positions.iter().map(|p| p.as_dvec3()).collect();
    let solid = Solid::convex_hull(&points, GREY);
    let volume = solid.volume();
    let sphere = 4.0 / 3.0 * std::f64::consts::PI;
    assert!(volume < sphere && volume > 0.95 * sphere, "{volume}");
    // Smoothed: corner normals point away from the centre, not along their face.
    let p = &solid.polygons[0];
    for v in &p.vertices {
        assert!(v.normal.dot(v.pos.normalize()) > 0.99);
    }
}

#[test]
fn points_that_span_no_volume_have_no_hull() {
    let flat: Vec<DVec3> = (0..20)
        .map(|i| DVec3::new(f64::from(i % 5), f64::from(i / 5), 0.0))
        .collect();
    assert!(Solid::convex_hull(&flat, GREY).is_empty());
    assert!(Solid::convex_hull(&flat[..3], GREY).is_empty());
    let line: Vec<DVec3> = (0..5).map(|i| DVec3::splat(f64::from(i))).collect();
    assert!(Solid::convex_hull(&line, GREY).is_empty());
    let mut nan = flat.clone();
    nan.push(DVec3::new(0.0, 0.0, f64::NAN));
    assert!(Solid::convex_hull(&nan, GREY).is_empty());
    assert!(Solid::convex_hull(&[DVec3::ONE; 8], GREY).is_empty());
}

proptest! {
    /// Any cloud with volume: a closed hull with every point on or behind every face, its
    /// vertices among the points, the same bits on a second run.
    #[test]
    fn hulls_are_closed_and_contain_every_point(
        raw in proptest::collection::vec((-50i32..50, -50i32..50, -50i32..50), 4..200),
        scale in 0.001f64..1000.0,
    ) {
        let points: Vec<DVec3> = raw
            .iter()
            .map(|&(x, y, z)| DVec3::new(f64::from(x), f64::from(y), f64::from(z)) * scale)
            .collect();
        let Some(triangles) = hull::hull_triangles(&points) else {
            return Ok(());
        };
        prop_assert!(hull_is_closed(&triangles));
        let extent = 100.0 * scale;
        for t in &triangles {
            let [a, b, c] = t.map(|i| points[i]);
            let n = (b - a).cross(c - a).normalize();
            for p in &points {
                prop_assert!(n.dot(*p - a) <= extent * 1e-6, "a point outside a face");
            }
        }
        prop_assert_eq!(Some(triangles), hull::hull_triangles(&points));
        let solid = Solid::convex_hull(&points, GREY);
        prop_assert!(solid.volume() > 0.0);
    }
}

/// A flat polygon in the z = 0 plane facing +z, from corners in counter-clockwise order.
fn flat(corners: &[[f64; 2]]) -> geom::Polygon {
    let vertices: Vec<geom::Vertex> = corners
        .iter()
        .map(|&[x, y]| geom::Vertex {
            pos: DVec3::new(x, y, 0.0),
            normal: DVec3::Z,
        })
        .collect();
    geom::Polygon {
        vertices,
        plane: geom::Plane {
            normal: DVec3::Z,
            w: 0.0,
        },
        color: GREY,
    }
}

fn corners(p: &geom::Polygon) -> Vec<[f64; 2]> {
    p.vertices.iter().map(|v| [v.pos.x, v.pos.y]).collect()
}

#[test]
fn pieces_of_a_split_square_merge_back_into_the_square() {
    // The square [0,2]² cut at x = 1, the right half cut again at y = 1: three pieces,
    // whose split points (1,0), (1,2), (1,1) and (2,1) no other polygon uses.
    let pieces = vec![
        flat(&[[0.0, 0.0], [1.0, 0.0], [1.0, 2.0], [0.0, 2.0]]),
        flat(&[[1.0, 0.0], [2.0, 0.0], [2.0, 1.0], [1.0, 1.0]]),
        flat(&[[1.0, 1.0], [2.0, 1.0], [2.0, 2.0], [1.0, 2.0]]),
    ];
    let merged = Solid { polygons: pieces }.merged();
    assert_eq!(merged.polygons.len(), 1);
    // The square's four corners, counter-clockwise, whichever comes first.
    let got = corners(&merged.polygons[0]);
    let square = [[0.0, 0.0], [2.0, 0.0], [2.0, 2.0], [0.0, 2.0]];
    let start = square.iter().position(|c| *c == got[0]).expect("a corner");
    let expected: Vec<[f64; 2]> = (0..4).map(|k| square[(start + k) % 4]).collect();
    assert_eq!(got, expected);
}

#[test]
fn merging_keeps_concave_unions_colors_and_shared_split_points_apart() {
    // An L of two squares: their union is concave, so they stay two.
    let l = vec![
        flat(&[[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]]),
        flat(&[[1.0, 0.0], [2.0, 0.0], [2.0, 1.0], [1.0, 1.0]]),
        flat(&[[0.0, 1.0], [1.0, 1.0], [1.0, 2.0], [0.0, 2.0]]),
    ];
    let merged = Solid { polygons: l }.merged();
    assert_eq!(
        merged.polygons.len(),
        2,
        "two of the three join, never all three"
    );
    // Another color does not join.
    let mut red = flat(&[[1.0, 0.0], [2.0, 0.0], [2.0, 1.0], [1.0, 1.0]]);
    red.color = RED;
    let pair = vec![flat(&[[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]]), red];
    assert_eq!(Solid { polygons: pair }.merged().polygons.len(), 2);
    // A split point another polygon (here in another plane) uses stays a corner: dropping
    // it would leave that polygon's corner in the middle of an edge (a T-junction).
    let mut wall = flat(&[[1.0, 0.0], [1.0, -1.0], [2.0, -1.0]]);
    for v in &mut wall.vertices {
        v.pos = DVec3::new(v.pos.x, 0.0, v.pos.y);
    }
    wall.plane = geom::Plane {
        normal: DVec3::NEG_Y,
        w: 0.0,
    };
    let halves = vec![
        flat(&[[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]]),
        flat(&[[1.0, 0.0], [2.0, 0.0], [2.0, 1.0], [1.0, 1.0]]),
        wall,
    ];
    let merged = Solid { polygons: halves }.merged();
    let top = &merged.polygons[0];
    assert!(corners(top).contains(&[1.0, 0.0]), "{:?}", corners(top));
    assert!(!corners(top).contains(&[1.0, 1.0]), "{:?}", corners(top));
}

#[test]
fn half_space_clips_keep_what_lies_behind_the_plane() {
    let cube = block([2.0, 2.0, 2.0], [0.0, 0.0, 0.0]);
    let never = || false;
    // Behind x = 0.5 facing +x: 1.5 of the 2 studs.
    let kept = cube
        .clip_half_space(DVec3::new(0.5, 0.0, 0.0), DVec3::X, RED, &never)
        .unwrap();
    assert!((kept.volume() - 6.0).abs() < 1e-9, "{}", kept.volume());
    let (lo, hi) = kept.bounds().unwrap();
    assert!((hi.x - 0.5).abs() < 1e-9 && (lo.x + 1.0).abs() < 1e-9);
    // The cut face takes the colour given; the old faces keep theirs.
    assert!(kept.polygons.iter().any(|p| p.color == RED));
    assert!(kept.polygons.iter().any(|p| p.color == GREY));
    // A tilted wall through the centre halves it.
    let tilted = cube
        .clip_half_space(DVec3::ZERO, DVec3::new(1.0, 1.0, 0.3), GREY, &never)
        .unwrap();
    assert!((tilted.volume() - 4.0).abs() < 1e-9, "{}", tilted.volume());
    // Wholly behind: the same solid; wholly in front: nothing.
    let all = cube
        .clip_half_space(DVec3::new(5.0, 0.0, 0.0), DVec3::X, RED, &never)
        .unwrap();
    assert_eq!(all, cube);
    assert!(
        cube.clip_half_space(DVec3::new(-5.0, 0.0, 0.0), DVec3::X, RED, &never)
            .unwrap()
            .is_empty()
    );
    // The color of most of the surface: what the next cut of this piece is painted.
    let small_red = cube
        .clip_half_space(DVec3::new(0.9, 0.0, 0.0), DVec3::X, RED, &never)
        .unwrap();
    assert_eq!(small_red.main_color(), Some(GREY));
    assert_eq!(Solid::default().main_color(), None);
    assert!(cube.contains(DVec3::new(0.9, -0.9, 0.0)));
    assert!(!cube.contains(DVec3::new(1.1, 0.0, 0.0)));
    assert!(!kept.contains(DVec3::new(0.75, 0.0, 0.0)));
}

#[test]
fn surface_distance_is_to_the_nearest_face_edge_or_corner() {
    let b = block([2.0, 2.0, 2.0], [0.0, 0.0, 0.0]);
    let near = |a: f64, e: f64| (a - e).abs() < 1e-9;
    // On a face, inside (to the nearest face), beside a face, off an edge, off a corner.
    assert!(near(b.surface_distance(DVec3::new(1.0, 0.2, 0.3)), 0.0));
    assert!(near(b.surface_distance(DVec3::new(0.0, 0.0, 0.0)), 1.0));
    assert!(near(b.surface_distance(DVec3::new(0.5, 0.0, 0.0)), 0.5));
    assert!(near(b.surface_distance(DVec3::new(3.0, 0.5, -0.5)), 2.0));
    assert!(near(
        b.surface_distance(DVec3::new(2.0, 2.0, 0.0)),
        2f64.sqrt()
    ));
    assert!(near(
        b.surface_distance(DVec3::new(2.0, 2.0, 2.0)),
        3f64.sqrt()
    ));
    assert_eq!(
        Solid::default().surface_distance(DVec3::ZERO),
        f64::INFINITY
    );
}
