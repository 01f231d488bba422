//! Module strings: symbols with optional numeric parameters, stored as flat arrays.

use std::fmt;

/// A string of modules such as `F(1,2)+[A]`. Each module is a `char` symbol with zero or
/// more `f64` parameters. Stored structure-of-arrays (symbols, parameter offsets, one flat
/// parameter buffer) so a million-module string is three allocations.
#[derive(Clone, Debug, PartialEq)]
pub struct LString {
    symbols: Vec<char>,
    /// `offsets[i]..offsets[i + 1]` are module `i`'s parameters; `offsets.len() == len + 1`.
    offsets: Vec<u32>,
    params: Vec<f64>,
}

/// A borrowed module of an [`LString`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Module<'a> {
    /// The symbol.
    pub symbol: char,
    /// Its parameters (empty for a plain symbol).
    pub params: &'a [f64],
}

impl LString {
    /// An empty string.
    pub fn new() -> Self {
        LString {
            symbols: Vec::new(),
            offsets: vec![0],
            params: Vec::new(),
        }
    }

    /// An empty string with room for `modules` modules and `params` parameters.
    pub fn with_capacity(modules: usize, params: usize) -> Self {
        let mut offsets = Vec::with_capacity(modules + 1);
        offsets.push(0);
        LString {
            symbols: Vec::with_capacity(modules),
            offsets,
            params: Vec::with_capacity(params),
        }
    }

    /// A string of parameterless modules, one per non-whitespace character of `symbols`.
    pub fn from_symbols(symbols: &str) -> Self {
        let mut s = LString::new();
        for c in symbols.chars().filter(|c| !c.is_whitespace()) {
            s.push(c, &[]);
        }
        s
    }

    /// Appends a module. A string holds at most `u32::MAX` parameters in total (rewriting
    /// enforces this through [`crate::Limits::max_params`]).
    #[inline]
    pub fn push(&mut self, symbol: char, params: &[f64]) {
        self.symbols.push(symbol);
        self.params.extend_from_slice(params);
        self.offsets.push(self.params.len() as u32);
    }

    /// Number of modules.
    #[inline]
    pub fn len(&self) -> usize {
        self.symbols.len()
    }

    /// Whether there are no modules.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.symbols.is_empty()
    }

    /// Total number of parameters over all modules.
    #[inline]
    pub fn param_count(&self) -> usize {
        self.params.len()
    }

    /// The symbols, one per module.
    #[inline]
    pub fn symbols(&self) -> &[char] {
        &self.symbols
    }

    /// The parameters of module `i` (panics if `i >= len()`).
    #[inline]
    pub fn params(&self, i: usize) -> &[f64] {
        &self.params[self.offsets[i] as usize..self.offsets[i + 1] as usize]
    }

    /// Module `i`, if any.
    #[inline]
    pub fn get(&self, i: usize) -> Option<Module<'_>> {
        (i < self.len()).then(|| Module {
            symbol: self.symbols[i],
            params: self.params(i),
        })
    }

    /// Iterates the modules in order.
    pub fn iter(&self) -> impl Iterator<Item = Module<'_>> + '_ {
        (0..self.len()).map(|i| Module {
            symbol: self.symbols[i],
            params: self.params(i),
        })
    }

    /// The symbols alone, as a `String` (parameters dropped).
    pub fn symbol_string(&self) -> String {
        self.symbols.iter().collect()
    }

    /// Removes every module, keeping the allocations.
    pub fn clear(&mut self) {
        self.symbols.clear();
        self.params.clear();
        self.offsets.clear();
        self.offsets.push(0);
    }
}

impl Default for LString {
    fn default() -> Self {
        LString::new()
    }
}

impl fmt::Display for LString {
    /// `F(1,0.5)+[A]`: parameters in Rust's shortest round-trip form, comma-separated.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for m in self.iter() {
            write!(f, "{}", m.symbol)?;
            if !m.params.is_empty() {
                f.write_str("(")?;
                for (k, p) in m.params.iter().enumerate() {
                    if k > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "{p}")?;
                }
                f.write_str(")")?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn push_iterate_display() {
        let mut s = LString::from_symbols("F +");
        s.push('A', &[1.0, 0.5]);
        s.push('[', &[]);
        assert_eq!(s.len(), 4);
        assert_eq!(s.param_count(), 2);
        assert_eq!(s.params(2), &[1.0, 0.5]);
        assert_eq!(s.to_string(), "F+A(1,0.5)[");
        assert_eq!(s.symbol_string(), "F+A[");
        assert_eq!(s.get(9), None);
        s.clear();
        assert!(s.is_empty());
        assert_eq!(LString::default().to_string(), "");
        let mut d = LString::default();
        d.push('X', &[2.0]);
        assert_eq!(d.to_string(), "X(2)");
    }
}
