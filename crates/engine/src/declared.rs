//! Declared attribute defaults per generator module, kept by the Source they came from, for
//! front ends that show them with every snapshot (the studio, the MCP server): loading a
//! generator each time would require it again.

use crate::Engine;
use procmodel_dom::keys::KEYS;
use rbx_types::{Ref, Variant};
use std::collections::HashMap;

/// What each generator module declares, read through [`Engine::declared_attributes`] and
/// re-read when the module's Source changes or when any module's code was replaced since (a
/// generator may take its `Attributes` from a module it requires: an edit of that file, or
/// the undo of one).
#[derive(Debug, Default)]
pub struct DeclaredDefaults {
    by_module: HashMap<Ref, (String, Option<Vec<(String, Variant)>>)>,
    /// [`Engine::code_revision`] the entries were read at.
    code_revision: u64,
}

impl DeclaredDefaults {
    /// The declared defaults of `module`'s generator (`None`: it declares none, or it does
    /// not load).
    pub fn of(&mut self, engine: &Engine, module: Ref) -> Option<Vec<(String, Variant)>> {
        let revision = engine.code_revision();
        if revision != self.code_revision {
            self.by_module.clear();
            self.code_revision = revision;
        }
        let source =
            engine.with_dom(
                |d| match d.get_by_ref(module)?.properties.get(&KEYS.source) {
                    Some(Variant::String(s)) => Some(s.clone()),
                    _ => None,
                },
            )?;
        if let Some((s, d)) = self.by_module.get(&module)
            && *s == source
        {
            return d.clone();
        }
        let declared = engine.declared_attributes(module).ok().flatten();
        self.by_module.insert(module, (source, declared.clone()));
        declared
    }
}
