//! Deep trees: the recursive readers and writers of the XML format (rbx_xml recurses once
//! per level of `<Item>` nesting, about a kilobyte of native stack each) run on a thread
//! with a large stack ([`deep_stack`]), and files nesting instances deeper than
//! [`MAX_FILE_DEPTH`] are refused by the callers that read them ([`xml_item_depth`] before
//! decoding, [`tree_depth`] after), so no file can overflow a stack and abort the process.

/// Deepest nesting of instances a file may have (no real place comes near it).
pub const MAX_FILE_DEPTH: usize = 10_000;

/// Native stack of the thread [`deep_stack`] runs on: room for [`MAX_FILE_DEPTH`] levels of
/// rbx_xml's recursion with a wide margin (address space only; pages are committed as used).
const DEEP_STACK_BYTES: usize = 512 << 20;

/// Runs `f` on a thread with a large native stack and returns what it returns (a panic of
/// `f` continues on the calling thread); runs it here if no thread can be made.
pub fn deep_stack<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    let slot = std::sync::Mutex::new(Some(f));
    let take = || slot.lock().unwrap_or_else(|e| e.into_inner()).take();
    std::thread::scope(|scope| {
        let spawned = std::thread::Builder::new()
            .name("procmodel-deep".into())
            .stack_size(DEEP_STACK_BYTES)
            .spawn_scoped(scope, || take().map(|f| f()));
        let here = || take().map(|f| f());
        let result = match spawned {
            Ok(handle) => match handle.join() {
                Ok(v) => v,
                Err(payload) => std::panic::resume_unwind(payload),
            },
            Err(_) => here(),
        };
        result.expect("the function runs once, on one thread or the other")
    })
}

/// The deepest nesting of `<Item` elements in the text of an XML Roblox file (CDATA
/// sections and comments skipped: a script's Source may hold anything), counted without
/// parsing, so a file too deep to decode is refused before it is.
pub fn xml_item_depth(bytes: &[u8]) -> usize {
    let (mut depth, mut deepest, mut at) = (0usize, 0usize, 0usize);
    let skip_to = |from: usize, end: &[u8]| {
        bytes[from..]
            .windows(end.len())
            .position(|w| w == end)
            .map_or(bytes.len(), |p| from + p + end.len())
    };
    while let Some(p) = bytes[at..].iter().position(|&b| b == b'<') {
        at += p;
        let rest = &bytes[at..];
        if rest.starts_with(b"<![CDATA[") {
            at = skip_to(at, b"]]>");
        } else if rest.starts_with(b"<!--") {
            at = skip_to(at, b"-->");
        } else if rest.starts_with(b"<Item")
            && rest.get(5).is_some_and(|b| !b.is_ascii_alphanumeric())
        {
            depth += 1;
            deepest = deepest.max(depth);
            at += 5;
        } else if rest.starts_with(b"</Item>") {
            depth = depth.saturating_sub(1);
            at += 7;
        } else {
            at += 1;
        }
    }
    deepest
}

/// The deepest nesting of instances under the root of `dom` (its children are level 1).
pub fn tree_depth(dom: &rbx_dom_weak::WeakDom) -> usize {
    let mut deepest = 0;
    let mut stack: Vec<(rbx_types::Ref, usize)> = vec![(dom.root_ref(), 0)];
    while let Some((r, d)) = stack.pop() {
        deepest = deepest.max(d);
        if let Some(i) = dom.get_by_ref(r) {
            stack.extend(i.children().iter().map(|&c| (c, d + 1)));
        }
    }
    deepest
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn item_depth_counts_items_only_outside_cdata_and_comments() {
        let xml = br#"<roblox><Item class="Folder"><Properties><ProtectedString name="Source"><![CDATA[<Item class="x"><Item>]]></ProtectedString></Properties>
<!-- <Item> --><Item class="Part"></Item><Item class="Model"><Item class="Part"></Item></Item></Item><Items/></roblox>"#;
        assert_eq!(xml_item_depth(xml), 3);
        assert_eq!(xml_item_depth(b""), 0);
        assert_eq!(xml_item_depth(b"<Item<![CDATA["), 1);
    }

    #[test]
    fn tree_depth_is_the_deepest_chain_below_the_root() {
        use rbx_dom_weak::{InstanceBuilder, WeakDom};
        let mut dom = WeakDom::new(InstanceBuilder::new("DataModel"));
        assert_eq!(tree_depth(&dom), 0);
        let mut at = dom.root_ref();
        for _ in 0..50_000 {
            at = dom.insert(at, InstanceBuilder::new("Folder"));
        }
        dom.insert(dom.root_ref(), InstanceBuilder::new("Part"));
        assert_eq!(tree_depth(&dom), 50_000);
    }

    #[test]
    fn a_deep_stack_runs_deep_recursion_and_passes_panics_on() {
        fn down(n: usize) -> usize {
            let pad = std::hint::black_box([0u8; 512]);
            if n == 0 {
                pad[0] as usize
            } else {
                down(n - 1) + 1
            }
        }
        // About 100 MB of frames: more than any default thread stack.
        assert_eq!(deep_stack(|| down(200_000)), 200_000);
        let caught = std::panic::catch_unwind(|| deep_stack(|| panic!("inner")));
        assert!(caught.is_err());
    }
}
