//! Life-like birth/survival rules (`B5678/S45678`, `B3/S23`) and their parser.

use std::fmt;

use crate::error::RuleError;

/// Neighbourhood size of the 2D Moore neighbourhood.
pub(crate) const MAX_2D: u32 = 8;
/// Neighbourhood size of the 3D 26-neighbourhood.
pub(crate) const MAX_3D: u32 = 26;

/// Birth/survival rule on the count of **wall** ("alive") neighbours.
///
/// Text syntax: a `B` part and an `S` part in either order, separated by `/`, letters in
/// either case. Counts are single digits (`B5678`), or — when the part contains `,` or `-`
/// — comma-separated numbers and inclusive ranges (`B13-26/S14,15,17-26`, needed in 3D).
/// An empty part (`B/S23`) means "never".
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Rule {
    birth: u32,
    survive: u32,
}

impl Rule {
    /// The classic cave rule `B5678/S45678`.
    pub const CAVE: Rule = Rule {
        birth: 0b1_1110_0000,
        survive: 0b1_1111_0000,
    };

    /// Builds a rule from neighbour counts (counts above 31 are ignored).
    pub fn from_counts(birth: &[u32], survive: &[u32]) -> Rule {
        let mask = |c: &[u32]| c.iter().filter(|&&n| n < 32).fold(0u32, |m, &n| m | 1 << n);
        Rule {
            birth: mask(birth),
            survive: mask(survive),
        }
    }

    /// Parses a 2D rule (counts 0–8).
    pub fn parse(text: &str) -> Result<Rule, RuleError> {
        Self::parse_with_max(text, MAX_2D)
    }

    /// Parses a 3D rule (counts 0–26).
    pub fn parse_3d(text: &str) -> Result<Rule, RuleError> {
        Self::parse_with_max(text, MAX_3D)
    }

    fn parse_with_max(text: &str, max: u32) -> Result<Rule, RuleError> {
        if text.trim().is_empty() {
            return Err(RuleError::Empty);
        }
        let chars: Vec<char> = text.chars().collect();
        let mut birth = None;
        let mut survive = None;
        let mut i = 0;
        loop {
            let col = i + 1;
            let part = match chars.get(i) {
                Some('B' | 'b') => 'B',
                Some('S' | 's') => 'S',
                Some(&found) => {
                    return Err(RuleError::UnexpectedChar {
                        rule: text.to_owned(),
                        column: col,
                        found,
                        expected: "'B' or 'S'",
                    });
                }
                None => break,
            };
            let slot = if part == 'B' {
                &mut birth
            } else {
                &mut survive
            };
            if slot.is_some() {
                return Err(RuleError::DuplicatePart {
                    rule: text.to_owned(),
                    column: col,
                    part,
                });
            }
            let start = i + 1;
            let end = chars[start..]
                .iter()
                .position(|&c| c == '/')
                .map_or(chars.len(), |p| start + p);
            *slot = Some(parse_counts(text, &chars, start, end, max)?);
            i = end;
            if i < chars.len() {
                i += 1; // skip '/'
                if i == chars.len() {
                    return Err(RuleError::UnexpectedChar {
                        rule: text.to_owned(),
                        column: i,
                        found: '/',
                        expected: "a part after '/'",
                    });
                }
            }
        }
        let missing = |part| RuleError::MissingPart {
            rule: text.to_owned(),
            part,
        };
        Ok(Rule {
            birth: birth.ok_or_else(|| missing('B'))?,
            survive: survive.ok_or_else(|| missing('S'))?,
        })
    }

    /// Whether a dead (floor) cell with `n` wall neighbours becomes wall.
    #[inline]
    pub fn births(&self, n: u32) -> bool {
        n < 32 && self.birth >> n & 1 == 1
    }

    /// Whether a live (wall) cell with `n` wall neighbours stays wall.
    #[inline]
    pub fn survives(&self, n: u32) -> bool {
        n < 32 && self.survive >> n & 1 == 1
    }

    /// The next state of a cell (`alive` = wall) with `n` wall neighbours.
    #[inline]
    pub fn next(&self, alive: bool, n: u32) -> bool {
        let mask = if alive { self.survive } else { self.birth };
        n < 32 && mask >> n & 1 == 1
    }

    /// Packed lookup table: bit `n` of `table[alive]` is the next state (used by the kernels).
    #[inline]
    pub(crate) fn masks(&self) -> [u32; 2] {
        [self.birth, self.survive]
    }
}

impl Default for Rule {
    fn default() -> Self {
        Rule::CAVE
    }
}

impl std::str::FromStr for Rule {
    type Err = RuleError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Rule::parse(s)
    }
}

impl fmt::Display for Rule {
    /// Canonical form: digits when every count is below 10, else the list syntax.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let part = |mask: u32| -> String {
            let counts: Vec<u32> = (0..32).filter(|n| mask >> n & 1 == 1).collect();
            if counts.iter().all(|&n| n < 10) {
                counts.iter().map(|n| n.to_string()).collect()
            } else {
                counts
                    .iter()
                    .map(|n| n.to_string())
                    .collect::<Vec<_>>()
                    .join(",")
            }
        };
        write!(f, "B{}/S{}", part(self.birth), part(self.survive))
    }
}

/// Parses the counts of one part, `chars[start..end]`.
fn parse_counts(
    text: &str,
    chars: &[char],
    start: usize,
    end: usize,
    max: u32,
) -> Result<u32, RuleError> {
    let body = &chars[start..end];
    let unexpected = |idx: usize, expected| RuleError::UnexpectedChar {
        rule: text.to_owned(),
        column: idx + 1,
        found: chars[idx],
        expected,
    };
    let too_large = |idx: usize, count| RuleError::CountTooLarge {
        rule: text.to_owned(),
        column: idx + 1,
        count,
        max,
    };
    let mut mask = 0u32;
    if !body.iter().any(|&c| c == ',' || c == '-') {
        for (k, &c) in body.iter().enumerate() {
            let d = c
                .to_digit(10)
                .ok_or_else(|| unexpected(start + k, "a digit or '/'"))?;
            if d > max {
                return Err(too_large(start + k, d));
            }
            mask |= 1 << d;
        }
        return Ok(mask);
    }
    // List syntax: item (',' item)*, item = number ('-' number)?
    let mut i = start;
    let number = |i: &mut usize| -> Result<u32, RuleError> {
        let begin = *i;
        let mut value: u32 = 0;
        while *i < end && chars[*i].is_ascii_digit() {
            value = value
                .saturating_mul(10)
                .saturating_add(chars[*i].to_digit(10).unwrap_or(0));
            *i += 1;
        }
        if *i == begin {
            return Err(if begin < end {
                unexpected(begin, "a number")
            } else {
                RuleError::UnexpectedChar {
                    rule: text.to_owned(),
                    column: begin.min(chars.len().saturating_sub(1)) + 1,
                    found: chars[begin.min(chars.len() - 1)],
                    expected: "a number",
                }
            });
        }
        if value > max {
            return Err(too_large(begin, value));
        }
        Ok(value)
    };
    loop {
        let lo = number(&mut i)?;
        let mut hi = lo;
        if i < end && chars[i] == '-' {
            i += 1;
            hi = number(&mut i)?;
            if hi < lo {
                return Err(unexpected(
                    i - 1,
                    "a range whose end is not below its start",
                ));
            }
        }
        for n in lo..=hi {
            mask |= 1 << n;
        }
        if i == end {
            return Ok(mask);
        }
        if chars[i] != ',' {
            return Err(unexpected(i, "',' or '-'"));
        }
        i += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(text: &str, canonical: &str) {
        let rule = Rule::parse_3d(text).unwrap();
        assert_eq!(rule.to_string(), canonical, "rule {text}");
    }

    #[test]
    fn parses_canonical_forms() {
        check("B5678/S45678", "B5678/S45678");
        check("b3/s23", "B3/S23");
        check("S23/B3", "B3/S23");
        check("B/S", "B/S");
        check(
            "B13-26/S14,15,17-26",
            "B13,14,15,16,17,18,19,20,21,22,23,24,25,26/S14,15,17,18,19,20,21,22,23,24,25,26",
        );
        assert_eq!(Rule::parse("B5678/S45678").unwrap(), Rule::CAVE);
        assert_eq!(
            Rule::parse("B3/S23").unwrap(),
            Rule::from_counts(&[3], &[2, 3])
        );
    }

    #[test]
    fn next_state() {
        let r = Rule::CAVE;
        assert!(!r.next(false, 4));
        assert!(r.next(false, 5));
        assert!(r.next(true, 4));
        assert!(!r.next(true, 3));
        assert!(r.births(8) && r.survives(8) && !r.births(40));
    }

    fn error(text: &str) -> String {
        Rule::parse(text).unwrap_err().to_string()
    }

    #[test]
    fn errors_name_character_and_column() {
        assert_eq!(
            error("B5x78/S45678"),
            "unexpected character 'x' at column 3 in rule \"B5x78/S45678\" (expected a digit or '/')"
        );
        assert_eq!(
            error("B59/S4"),
            "neighbour count 9 at column 3 in rule \"B59/S4\" exceeds the maximum 8"
        );
        assert_eq!(
            error("X3/S23"),
            "unexpected character 'X' at column 1 in rule \"X3/S23\" (expected 'B' or 'S')"
        );
        assert_eq!(
            error("B3/B4"),
            "duplicate 'B' part at column 4 in rule \"B3/B4\""
        );
        assert_eq!(
            error("B3"),
            "rule \"B3\" has no 'S' part (expected e.g. \"B5678/S45678\")"
        );
        assert_eq!(
            error("  "),
            "empty rule string (expected e.g. \"B5678/S45678\")"
        );
        assert_eq!(
            error("B3/"),
            "unexpected character '/' at column 3 in rule \"B3/\" (expected a part after '/')"
        );
        assert!(error("B1,/S2").contains("column 4"));
        assert!(error("B1-/S2").contains("column 4"));
        assert!(error("B4-2/S2").contains("column 4"));
        assert!(Rule::parse_3d("B27/S1,2").is_ok());
        assert!(
            Rule::parse_3d("B1,27/S1")
                .unwrap_err()
                .to_string()
                .contains("27")
        );
    }
}
