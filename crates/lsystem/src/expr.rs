//! A small arithmetic expression language for parametric L-systems: numbers, parameters,
//! `+ - * / ^`, comparisons, `&& || !` and parentheses.
//!
//! Precedence, loosest first: `||`, `&&`, comparisons (`== != < <= > >=`, non-associative),
//! `+ -`, `* /`, unary `- !`, `^` (right-associative, so `-2^2 = -4` and `2^3^2 = 512`).
//! Comparisons and logic give 1 or 0; a condition holds when its value is non-zero.

use crate::error::ParseError;

/// A binary operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Op {
    Add,
    Sub,
    Mul,
    Div,
    Pow,
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
    And,
    Or,
}

/// A compiled expression; parameters are resolved to slots at parse time.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Expr {
    Num(f64),
    Param(usize),
    Neg(Box<Expr>),
    Not(Box<Expr>),
    Bin(Op, Box<Expr>, Box<Expr>),
}

impl Expr {
    /// Evaluates with parameter slots `params`; missing slots read as 0.
    pub(crate) fn eval(&self, params: &[f64]) -> f64 {
        match self {
            Expr::Num(v) => *v,
            Expr::Param(i) => params.get(*i).copied().unwrap_or(0.0),
            Expr::Neg(e) => -e.eval(params),
            Expr::Not(e) => f64::from(u8::from(e.eval(params) == 0.0)),
            Expr::Bin(op, a, b) => {
                let x = a.eval(params);
                // Short-circuit logic.
                match op {
                    Op::And if x == 0.0 => return 0.0,
                    Op::Or if x != 0.0 => return 1.0,
                    _ => {}
                }
                let y = b.eval(params);
                let t = |c: bool| f64::from(u8::from(c));
                match op {
                    Op::Add => x + y,
                    Op::Sub => x - y,
                    Op::Mul => x * y,
                    Op::Div => x / y,
                    Op::Pow => x.powf(y),
                    Op::Lt => t(x < y),
                    Op::Le => t(x <= y),
                    Op::Gt => t(x > y),
                    Op::Ge => t(x >= y),
                    Op::Eq => t(x == y),
                    Op::Ne => t(x != y),
                    Op::And | Op::Or => t(y != 0.0),
                }
            }
        }
    }
}

/// Resolves an identifier to an expression (a parameter slot or a constant).
pub(crate) type Resolver<'a> = &'a dyn Fn(&str) -> Option<Expr>;

/// Parses `chars` (one line's characters from `start` to `end`) as one expression.
/// `line` is used in errors; columns are `index + 1`.
pub(crate) fn parse_expr(
    chars: &[char],
    start: usize,
    end: usize,
    line: usize,
    resolve: Resolver<'_>,
) -> Result<Expr, ParseError> {
    let mut p = Parser {
        chars,
        pos: start,
        end,
        line,
        resolve,
    };
    p.skip_ws();
    if p.pos >= p.end {
        return Err(p.error_at(start, "expected an expression"));
    }
    let e = p.or()?;
    p.skip_ws();
    if p.pos < p.end {
        return Err(p.error_at(
            p.pos,
            format!("unexpected {:?} in expression", chars[p.pos]),
        ));
    }
    Ok(e)
}

struct Parser<'a> {
    chars: &'a [char],
    pos: usize,
    end: usize,
    line: usize,
    resolve: Resolver<'a>,
}

impl Parser<'_> {
    fn error_at(&self, pos: usize, message: impl Into<String>) -> ParseError {
        ParseError::new(self.line, pos + 1, message)
    }

    fn skip_ws(&mut self) {
        while self.pos < self.end && self.chars[self.pos].is_whitespace() {
            self.pos += 1;
        }
    }

    fn peek(&self) -> Option<char> {
        (self.pos < self.end).then(|| self.chars[self.pos])
    }

    fn peek2(&self) -> Option<char> {
        (self.pos + 1 < self.end).then(|| self.chars[self.pos + 1])
    }

    /// Consumes `token` (after whitespace) if present.
    fn eat(&mut self, token: &str) -> bool {
        self.skip_ws();
        let n = token.chars().count();
        if self.pos + n <= self.end
            && token
                .chars()
                .zip(&self.chars[self.pos..])
                .all(|(a, &b)| a == b)
        {
            self.pos += n;
            true
        } else {
            false
        }
    }

    fn or(&mut self) -> Result<Expr, ParseError> {
        let mut e = self.and()?;
        while self.eat("||") {
            e = Expr::Bin(Op::Or, Box::new(e), Box::new(self.and()?));
        }
        Ok(e)
    }

    fn and(&mut self) -> Result<Expr, ParseError> {
        let mut e = self.cmp()?;
        while self.eat("&&") {
            e = Expr::Bin(Op::And, Box::new(e), Box::new(self.cmp()?));
        }
        Ok(e)
    }

    fn cmp(&mut self) -> Result<Expr, ParseError> {
        let e = self.sum()?;
        for (tok, op) in [
            ("==", Op::Eq),
            ("!=", Op::Ne),
            ("<=", Op::Le),
            (">=", Op::Ge),
            ("<", Op::Lt),
            (">", Op::Gt),
        ] {
            if self.eat(tok) {
                return Ok(Expr::Bin(op, Box::new(e), Box::new(self.sum()?)));
            }
        }
        Ok(e)
    }

    fn sum(&mut self) -> Result<Expr, ParseError> {
        let mut e = self.product()?;
        loop {
            if self.eat("+") {
                e = Expr::Bin(Op::Add, Box::new(e), Box::new(self.product()?));
            } else if self.eat("-") {
                e = Expr::Bin(Op::Sub, Box::new(e), Box::new(self.product()?));
            } else {
                return Ok(e);
            }
        }
    }

    fn product(&mut self) -> Result<Expr, ParseError> {
        let mut e = self.unary()?;
        loop {
            if self.eat("*") {
                e = Expr::Bin(Op::Mul, Box::new(e), Box::new(self.unary()?));
            } else if self.eat("/") {
                e = Expr::Bin(Op::Div, Box::new(e), Box::new(self.unary()?));
            } else {
                return Ok(e);
            }
        }
    }

    fn unary(&mut self) -> Result<Expr, ParseError> {
        self.skip_ws();
        if self.eat("-") {
            return Ok(Expr::Neg(Box::new(self.unary()?)));
        }
        if self.peek() == Some('!') && self.peek2() != Some('=') {
            self.pos += 1;
            return Ok(Expr::Not(Box::new(self.unary()?)));
        }
        self.power()
    }

    fn power(&mut self) -> Result<Expr, ParseError> {
        let base = self.atom()?;
        if self.eat("^") {
            // Right-associative; the exponent may carry its own unary minus.
            let exp = self.unary()?;
            return Ok(Expr::Bin(Op::Pow, Box::new(base), Box::new(exp)));
        }
        Ok(base)
    }

    fn atom(&mut self) -> Result<Expr, ParseError> {
        self.skip_ws();
        let start = self.pos;
        match self.peek() {
            None => Err(self.error_at(self.pos.min(self.end), "expected a number, a name or '('")),
            Some('(') => {
                self.pos += 1;
                let e = self.or()?;
                if !self.eat(")") {
                    return Err(self.error_at(
                        self.pos.min(self.chars.len().saturating_sub(1)),
                        "expected ')'",
                    ));
                }
                Ok(e)
            }
            Some(c) if c.is_ascii_digit() || c == '.' => {
                while self.peek().is_some_and(|c| c.is_ascii_digit() || c == '.') {
                    self.pos += 1;
                }
                // Exponent: 1e-3, 2E5.
                if matches!(self.peek(), Some('e' | 'E'))
                    && (self.peek2().is_some_and(|c| c.is_ascii_digit())
                        || (matches!(self.peek2(), Some('+' | '-'))
                            && self.pos + 2 < self.end
                            && self.chars[self.pos + 2].is_ascii_digit()))
                {
                    self.pos += 2;
                    while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                        self.pos += 1;
                    }
                }
                let text: String = self.chars[start..self.pos].iter().collect();
                text.parse::<f64>()
                    .map(Expr::Num)
                    .map_err(|_| self.error_at(start, format!("invalid number {text:?}")))
            }
            Some(c) if c.is_alphabetic() || c == '_' => {
                while self.peek().is_some_and(|c| c.is_alphanumeric() || c == '_') {
                    self.pos += 1;
                }
                let name: String = self.chars[start..self.pos].iter().collect();
                (self.resolve)(&name)
                    .ok_or_else(|| self.error_at(start, format!("unknown name {name:?}")))
            }
            Some(c) => Err(self.error_at(start, format!("unexpected {c:?} in expression"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eval(text: &str, x: f64) -> f64 {
        let chars: Vec<char> = text.chars().collect();
        let resolve = |n: &str| match n {
            "x" => Some(Expr::Param(0)),
            "pi" => Some(Expr::Num(std::f64::consts::PI)),
            _ => None,
        };
        parse_expr(&chars, 0, chars.len(), 1, &resolve)
            .unwrap()
            .eval(&[x])
    }

    fn error(text: &str) -> String {
        let chars: Vec<char> = text.chars().collect();
        let resolve = |n: &str| (n == "x").then_some(Expr::Param(0));
        parse_expr(&chars, 0, chars.len(), 4, &resolve)
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn arithmetic_and_precedence() {
        for (text, want) in [
            ("1 + 2 * 3", 7.0),
            ("(1 + 2) * 3", 9.0),
            ("2 ^ 3 ^ 2", 512.0),
            ("-2 ^ 2", -4.0),
            ("2 ^ -1", 0.5),
            ("x * 0.5", 1.5),
            ("x / 2 - 1", 0.5),
            ("1e3 + 2.5E-1", 1000.25),
            ("x > 1", 1.0),
            ("x <= 1", 0.0),
            ("x == 3 && x != 4", 1.0),
            ("x < 0 || !(x < 1)", 1.0),
            ("1 - 2 - 3", -4.0),
            ("8 / 4 / 2", 1.0),
            (".5", 0.5),
        ] {
            assert_eq!(eval(text, 3.0), want, "{text}");
        }
        assert!((eval("pi", 0.0) - std::f64::consts::PI).abs() < 1e-15);
    }

    #[test]
    fn errors_have_columns() {
        assert_eq!(error("x + y"), "line 4, column 5: unknown name \"y\"");
        assert_eq!(
            error("x +"),
            "line 4, column 4: expected a number, a name or '('"
        );
        assert_eq!(error("(x + 1"), "line 4, column 6: expected ')'");
        assert_eq!(
            error("x 1"),
            "line 4, column 3: unexpected '1' in expression"
        );
        assert_eq!(error("1..2"), "line 4, column 1: invalid number \"1..2\"");
        assert_eq!(error("  "), "line 4, column 1: expected an expression");
        assert_eq!(
            error("x $ 1"),
            "line 4, column 3: unexpected '$' in expression"
        );
    }
}
