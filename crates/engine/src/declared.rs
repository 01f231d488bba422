//! Declared attribute defaults per generator module, kept by the Source they came from, for
//! front ends that show them with every snapshot (the studio, the MCP server): loading a
//! generator each time would require it again.

use crate::Engine;
use procmodel_dom::keys::KEYS;
use rbx_types::{Ref, Variant};
use std::collections::HashMap;

/// What each generator module declares, read through [`Engine::declared_attributes`] and
/// re-read when the module's Source changes (or after [`DeclaredDefaults::forget`]).
#[derive(Debug, Default)]
pub struct DeclaredDefaults {
    by_module: HashMap<Ref, (String, Option<Vec<(String, Variant)>>)>,
}

impl DeclaredDefaults {
    /// The declared defaults of `module`'s generator (`None`: it declares none, or it does
    /// not load).
    pub fn of(&mut self, engine: &Engine, module: Ref) -> Option<Vec<(String, Variant)>> {
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

    /// Drops what `module` declared (a file it requires changed: its Source did not, but
    /// what it declares may have).
    pub fn forget(&mut self, module: Ref) {
        self.by_module.remove(&module);
    }
}
