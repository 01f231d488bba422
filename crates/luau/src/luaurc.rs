//! `.luaurc` files as Luau reads them: JSON with comments and trailing commas allowed.
//!
//! Owns: turning a `.luaurc`'s text into JSON. Must never: read files or resolve aliases
//! (`globals::require_file` does).

/// A `.luaurc` as Luau reads it: JSON that may also hold comments (`// …`, and Luau's
/// `-- …` and `--[[ … ]]`) and a comma before a closing `}` or `]` (as in the `.luaurc` files
/// of many Luau repositories). The flag says whether there were comments (rewriting the file
/// would drop them). Errors give the line and column in the file as written.
pub fn parse_luaurc(text: &str) -> Result<(serde_json::Value, bool), String> {
    procmodel_jsonc::parse(text, procmodel_jsonc::Dialect::Luaurc)
}
