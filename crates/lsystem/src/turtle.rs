//! The 3D turtle: interprets a module string as branch segments and leaves.

use glam::{DMat3, DQuat, DVec3};

use crate::error::TurtleError;
use crate::module::LString;

/// Turtle settings. Angles are in degrees.
#[derive(Clone, Debug, PartialEq)]
pub struct TurtleConfig {
    /// Distance of `F`/`f` without a parameter (default 1).
    pub step: f64,
    /// Turn angle of `+ - & ^ \ /` without a parameter (default 90).
    pub angle_degrees: f64,
    /// Initial width (default 1).
    pub width: f64,
    /// Factor applied to the width by `!` without a parameter (default 0.7).
    pub width_factor: f64,
    /// Leaf size of `L` without a parameter (default 1).
    pub leaf_size: f64,
    /// Symbols that move forward drawing a segment (default `F`).
    pub draw_symbols: Vec<char>,
    /// Symbols that move forward without drawing (default `f`).
    pub move_symbols: Vec<char>,
    /// Symbols that place a leaf (default `L`).
    pub leaf_symbols: Vec<char>,
}

impl Default for TurtleConfig {
    fn default() -> Self {
        TurtleConfig {
            step: 1.0,
            angle_degrees: 90.0,
            width: 1.0,
            width_factor: 0.7,
            leaf_size: 1.0,
            draw_symbols: vec!['F'],
            move_symbols: vec!['f'],
            leaf_symbols: vec!['L'],
        }
    }
}

/// A drawn branch segment.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Segment {
    /// Where the turtle was.
    pub start: DVec3,
    /// Where it moved to.
    pub end: DVec3,
    /// The turtle's width when drawing.
    pub width: f64,
    /// Branch nesting depth: the number of open `[` when drawn.
    pub depth: u32,
}

/// A leaf placed by a leaf symbol.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Leaf {
    /// The turtle's position.
    pub position: DVec3,
    /// Rotation taking the initial frame (heading +Y, left −X, up +Z) to the turtle's frame:
    /// `orientation * DVec3::Y` is the heading, `orientation * DVec3::Z` the up vector.
    pub orientation: DQuat,
    /// The leaf's parameter, or [`TurtleConfig::leaf_size`].
    pub size: f64,
    /// Branch nesting depth.
    pub depth: u32,
}

/// Everything the turtle drew, in string order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TurtleOutput {
    /// Branch segments.
    pub segments: Vec<Segment>,
    /// Leaves.
    pub leaves: Vec<Leaf>,
}

#[derive(Clone, Copy)]
struct State {
    pos: DVec3,
    h: DVec3,
    l: DVec3,
    u: DVec3,
    width: f64,
}

/// Interprets `s` with a turtle that starts at the origin heading +Y (up), left −X, up +Z,
/// so `+`/`-` turn in the XY plane counter-clockwise/clockwise seen from +Z.
///
/// | symbol | action (a parameter overrides the default) |
/// |---|---|
/// | `F` (draw symbols) | move `step` (or `F(d)`: `d`) along the heading, drawing a segment |
/// | `f` (move symbols) | move without drawing |
/// | `+` / `-` (also `−`) | yaw left / right about up by `angle_degrees` (or the parameter) |
/// | `&` / `^` | pitch down / up about left |
/// | `\` / `/` | roll left / right about the heading |
/// | `\|` | turn around (yaw 180°) |
/// | `$` | roll so that left is horizontal (ABOP's `$`; no-op when heading is vertical) |
/// | `[` / `]` | push / pop position, orientation and width |
/// | `!` | width × `width_factor`, or `!(w)` sets the width to `w` |
/// | `L` (leaf symbols) | place a leaf of size `leaf_size` (or `L(s)`) |
///
/// Other symbols are ignored. Turns by multiples of 90° use exact sines and cosines, so
/// axis-aligned drawings have exact coordinates.
pub fn interpret(s: &LString, config: &TurtleConfig) -> Result<TurtleOutput, TurtleError> {
    for (what, value) in [
        ("the step", config.step),
        ("the angle", config.angle_degrees),
        ("the width", config.width),
        ("the width factor", config.width_factor),
        ("the leaf size", config.leaf_size),
    ] {
        if !value.is_finite() {
            return Err(TurtleError::NonFinite {
                what,
                value,
                index: 0,
            });
        }
    }
    let mut out = TurtleOutput::default();
    let mut stack: Vec<State> = Vec::new();
    let mut t = State {
        pos: DVec3::ZERO,
        h: DVec3::Y,
        l: DVec3::NEG_X,
        u: DVec3::Z,
        width: config.width,
    };
    for (index, m) in s.iter().enumerate() {
        let arg = |what: &'static str, default: f64| -> Result<f64, TurtleError> {
            let v = m.params.first().copied().unwrap_or(default);
            if v.is_finite() {
                Ok(v)
            } else {
                Err(TurtleError::NonFinite {
                    what,
                    value: v,
                    index,
                })
            }
        };
        let c = m.symbol;
        if config.draw_symbols.contains(&c) {
            let end = t.pos + t.h * arg("a distance", config.step)?;
            out.segments.push(Segment {
                start: t.pos,
                end,
                width: t.width,
                depth: stack.len() as u32,
            });
            t.pos = end;
        } else if config.move_symbols.contains(&c) {
            t.pos += t.h * arg("a distance", config.step)?;
        } else if config.leaf_symbols.contains(&c) {
            out.leaves.push(Leaf {
                position: t.pos,
                orientation: orientation(&t),
                size: arg("a leaf size", config.leaf_size)?,
                depth: stack.len() as u32,
            });
        } else {
            match c {
                '+' => yaw(&mut t, arg("an angle", config.angle_degrees)?),
                '-' | '−' => yaw(&mut t, -arg("an angle", config.angle_degrees)?),
                '&' => pitch(&mut t, arg("an angle", config.angle_degrees)?),
                '^' => pitch(&mut t, -arg("an angle", config.angle_degrees)?),
                '\\' => roll(&mut t, arg("an angle", config.angle_degrees)?),
                '/' => roll(&mut t, -arg("an angle", config.angle_degrees)?),
                '|' => yaw(&mut t, 180.0),
                '$' => roll_to_horizontal(&mut t),
                '[' => stack.push(t),
                ']' => t = stack.pop().ok_or(TurtleError::UnbalancedPop { index })?,
                '!' => {
                    t.width = match m.params.first() {
                        Some(_) => arg("a width", 0.0)?,
                        None => t.width * config.width_factor,
                    }
                }
                _ => {}
            }
        }
    }
    Ok(out)
}

/// Sine and cosine of an angle in degrees, exact for multiples of 90°.
fn sin_cos_deg(degrees: f64) -> (f64, f64) {
    let r = degrees.rem_euclid(360.0);
    if r % 90.0 == 0.0 {
        match (r / 90.0) as u32 {
            0 => (0.0, 1.0),
            1 => (1.0, 0.0),
            2 => (0.0, -1.0),
            _ => (-1.0, 0.0),
        }
    } else {
        degrees.to_radians().sin_cos()
    }
}

/// Rotation about up: positive turns the heading towards left.
fn yaw(t: &mut State, degrees: f64) {
    let (s, c) = sin_cos_deg(degrees);
    let (h, l) = (t.h, t.l);
    t.h = h * c + l * s;
    t.l = l * c - h * s;
}

/// Rotation about left: positive pitches the heading down (away from up).
fn pitch(t: &mut State, degrees: f64) {
    let (s, c) = sin_cos_deg(degrees);
    let (h, u) = (t.h, t.u);
    t.h = h * c - u * s;
    t.u = u * c + h * s;
}

/// Rotation about the heading: positive rolls left towards up.
fn roll(t: &mut State, degrees: f64) {
    let (s, c) = sin_cos_deg(degrees);
    let (l, u) = (t.l, t.u);
    t.l = l * c + u * s;
    t.u = u * c - l * s;
}

fn roll_to_horizontal(t: &mut State) {
    let l = DVec3::Y.cross(t.h);
    if l.length_squared() > 1e-24 {
        t.l = l.normalize();
        t.u = t.h.cross(t.l);
    }
}

fn orientation(t: &State) -> DQuat {
    let frame = DMat3::from_cols(t.h, t.l, t.u);
    let initial = DMat3::from_cols(DVec3::Y, DVec3::NEG_X, DVec3::Z);
    DQuat::from_mat3(&(frame * initial.transpose())).normalize()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn draw(s: &str) -> Vec<(DVec3, DVec3)> {
        let s = LString::from_symbols(s);
        interpret(&s, &TurtleConfig::default())
            .unwrap()
            .segments
            .iter()
            .map(|g| (g.start, g.end))
            .collect()
    }

    #[test]
    fn square_closes_exactly() {
        let segs = draw("F+F+F+F");
        assert_eq!(segs.len(), 4);
        assert_eq!(segs[0].1, DVec3::new(0.0, 1.0, 0.0));
        assert_eq!(segs[1].1, DVec3::new(-1.0, 1.0, 0.0));
        assert_eq!(segs[3].1, DVec3::ZERO);
    }

    #[test]
    fn pitch_roll_and_turn_around() {
        // Pitch down from +Y heads towards -Z; roll then yaw moves in the new plane.
        assert_eq!(draw("&F")[0].1, DVec3::new(0.0, 0.0, -1.0));
        assert_eq!(draw("^F")[0].1, DVec3::new(0.0, 0.0, 1.0));
        assert_eq!(draw("\\+F")[0].1, DVec3::new(0.0, 0.0, 1.0));
        assert_eq!(draw("/+F")[0].1, DVec3::new(0.0, 0.0, -1.0));
        assert_eq!(draw("|F")[0].1, DVec3::new(0.0, -1.0, 0.0));
        assert_eq!(draw("-F")[0].1, DVec3::new(1.0, 0.0, 0.0));
        assert_eq!(draw("−F")[0].1, DVec3::new(1.0, 0.0, 0.0));
    }

    #[test]
    fn dollar_rolls_left_to_horizontal() {
        let mut s = LString::from_symbols("-");
        s.push('&', &[45.0]);
        s.push('\\', &[30.0]);
        s.push('L', &[]);
        s.push('$', &[]);
        s.push('L', &[]);
        let out = interpret(&s, &TurtleConfig::default()).unwrap();
        let [before, after] = [out.leaves[0], out.leaves[1]];
        let heading = |l: Leaf| l.orientation * DVec3::Y;
        let left = |l: Leaf| l.orientation * DVec3::NEG_X;
        assert!((heading(before) - heading(after)).length() < 1e-12);
        assert!(left(before).y.abs() > 0.1);
        assert!(left(after).y.abs() < 1e-12);
        assert!((left(after).length() - 1.0).abs() < 1e-12);
        assert_eq!(draw("fF")[0], (DVec3::Y, DVec3::new(0.0, 2.0, 0.0)));
    }

    #[test]
    fn stack_width_depth_and_leaves() {
        let mut s = LString::from_symbols("F[+F!L]");
        s.push('F', &[2.0]);
        s.push('!', &[0.25]);
        s.push('+', &[45.0]);
        s.push('F', &[]);
        s.push('L', &[3.0]);
        let out = interpret(&s, &TurtleConfig::default()).unwrap();
        assert_eq!(out.segments.len(), 4);
        assert_eq!(out.segments[1].depth, 1);
        assert_eq!(out.segments[1].end, DVec3::new(-1.0, 1.0, 0.0));
        assert_eq!(out.segments[2].start, DVec3::Y);
        assert_eq!(out.segments[2].end, DVec3::new(0.0, 3.0, 0.0));
        assert_eq!(out.segments[2].width, 1.0);
        assert_eq!(out.segments[3].width, 0.25);
        let d = out.segments[3].end - DVec3::new(-0.5f64.sqrt(), 3.0 + 0.5f64.sqrt(), 0.0);
        assert!(d.length() < 1e-12);
        assert_eq!(out.leaves.len(), 2);
        let leaf = out.leaves[0];
        assert_eq!(leaf.depth, 1);
        assert_eq!(leaf.size, 1.0);
        assert!((leaf.orientation * DVec3::Y - DVec3::NEG_X).length() < 1e-12);
        assert!((leaf.orientation * DVec3::Z - DVec3::Z).length() < 1e-12);
        assert_eq!(out.leaves[1].size, 3.0);
    }

    #[test]
    fn errors() {
        let s = LString::from_symbols("F]");
        assert_eq!(
            interpret(&s, &TurtleConfig::default())
                .unwrap_err()
                .to_string(),
            "']' at module 1 has no matching '['"
        );
        let mut s = LString::new();
        s.push('F', &[f64::NAN]);
        assert!(
            interpret(&s, &TurtleConfig::default())
                .unwrap_err()
                .to_string()
                .starts_with("non-finite value NaN for a distance at module 0")
        );
        let config = TurtleConfig {
            step: f64::INFINITY,
            ..TurtleConfig::default()
        };
        assert!(interpret(&LString::new(), &config).is_err());
    }
}
