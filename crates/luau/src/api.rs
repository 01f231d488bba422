//! What Roblox's API has that the host may not: every event, method and callback of every class, by
//! the class that declares it ([`members`], generated from the Roblox engine reference).
//! The host asks it only after its own members missed, to connect a script to an event of
//! the outside world (which never fires headless) and to tell a method procmodel does not
//! implement from a misspelt member. It must never decide what an implemented member does.

mod members;

/// Events that Roblox fires for things that also happen headless (a print, an error, a
/// property write, the session closing), which procmodel does not fire yet: connecting to
/// one is an error that says so, not a connection that silently never fires.
const NOT_FIRED: &[(&str, &str)] = &[
    ("CollectionService", "ItemAdded"),
    ("CollectionService", "ItemRemoved"),
    ("DataModel", "ItemChanged"),
    ("Path2D", "ControlPointChanged"),
    ("ServiceProvider", "ServiceRemoving"),
];

/// The class in `class`'s superclass chain (itself first) whose entry in `table` lists
/// `name`, and the table's copy of the name.
fn declared_in(
    table: &'static [(&'static str, &'static [&'static str])],
    class: &str,
    name: &str,
) -> Option<(&'static str, &'static str)> {
    let db = procmodel_dom::db();
    let start = db.classes.get(class)?;
    db.superclasses_iter(start).find_map(|c| {
        let names = own(table, c.name);
        let j = names.binary_search(&name).ok()?;
        Some((c.name, names[j]))
    })
}

/// The names `table` lists for `class` itself (none when it has no entry).
fn own(
    table: &'static [(&'static str, &'static [&'static str])],
    class: &str,
) -> &'static [&'static str] {
    match table.binary_search_by(|(k, _)| (*k).cmp(class)) {
        Ok(i) => table[i].1,
        Err(_) => &[],
    }
}

/// Whether any class the reference lists declares an event named `name`.
pub fn any_event(name: &str) -> bool {
    members::EVENTS
        .iter()
        .any(|(_, events)| events.contains(&name))
}

/// What Roblox's API says of an event name on a class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// The class has no such event.
    Unknown,
    /// An event of the outside world (input, physics, players, media, network): it exists
    /// and never fires headless. Its name.
    Outside(&'static str),
    /// One that fires for things that happen headless, which procmodel does not fire yet
    /// (declared by the class given).
    NotFired(&'static str),
}

/// The event `name` of `class`, by Roblox's API.
pub fn event(class: &str, name: &str) -> Event {
    match declared_in(members::EVENTS, class, name) {
        None => Event::Unknown,
        Some((by, name)) if NOT_FIRED.contains(&(by, name)) => Event::NotFired(by),
        Some((_, name)) => Event::Outside(name),
    }
}

/// The events Roblox's API declares on `class` itself (not inherited), sorted: what editor
/// definitions may declare, once a VM has shown each is a member.
pub fn declared_events(class: &str) -> &'static [&'static str] {
    own(members::EVENTS, class)
}

/// Services whose every method needs what a headless session lacks — a live experience's
/// servers, players or a client — with the reason their methods give (every method the
/// reference lists for them, none implemented).
const UNAVAILABLE_SERVICES: &[(&str, &str)] = &[
    (
        "AnalyticsService",
        "analytics go to Roblox's servers (scripts have no network access)",
    ),
    (
        "BadgeService",
        "badges are kept by Roblox's servers (scripts have no network access)",
    ),
    (
        "ConfigService",
        "experience configs come from Roblox's servers (scripts have no network access); keep settings in the place or in a module",
    ),
    (
        "ContextActionService",
        "input actions are the client's (a headless session has no keyboard, mouse, gamepad or headset)",
    ),
    (
        "GenerationService",
        "AI generation runs on Roblox's servers (scripts have no network access)",
    ),
    (
        "GuiService",
        "GUI selection, menus and notifications are the client's (a headless session has no client)",
    ),
    (
        "MemoryStoreService",
        "memory stores are not available (a headless session has no experience to store for)",
    ),
    (
        "MessagingService",
        "cross-server messages need Roblox's servers (a headless session is no experience server)",
    ),
    (
        "PolicyService",
        "policies come from Roblox's servers for a player (a headless session has no players)",
    ),
    (
        "SocialService",
        "social features need players and Roblox's servers (a headless session has neither)",
    ),
    (
        "StarterGui",
        "the core GUI is the client's (a headless session has no client)",
    ),
    (
        "TeleportService",
        "teleports need players and Roblox's servers (a headless session has neither)",
    ),
    (
        "UserInputService",
        "input is the client's (a headless session has no keyboard, mouse, gamepad or headset)",
    ),
];

/// Why the method `name` of `class` cannot run here, when Roblox's API gives it to a service
/// of [`UNAVAILABLE_SERVICES`]: the declaring class and the reason.
pub fn unavailable(class: &str, name: &str) -> Option<(&'static str, &'static str)> {
    let (by, _) = declared_in(members::METHODS, class, name)?;
    UNAVAILABLE_SERVICES
        .iter()
        .find(|(service, _)| *service == by)
        .map(|(service, reason)| (*service, *reason))
}

/// The class declaring `name` as a method of plugin security of `class` (or a superclass):
/// Studio plugins may call it, and `procmodel run` scripts are such trusted tools.
pub fn plugin_method(class: &str, name: &str) -> Option<&'static str> {
    declared_in(members::PLUGIN_METHODS, class, name).map(|(by, _)| by)
}

/// The callbacks Roblox's API declares on `class` itself (not inherited), sorted: scripts
/// set them (never read them), so editor definitions declare them as functions.
pub fn declared_callbacks(class: &str) -> &'static [&'static str] {
    own(members::CALLBACKS, class)
}

/// The class declaring `name` as a method of `class` (or a superclass), by Roblox's API.
pub fn method(class: &str, name: &str) -> Option<&'static str> {
    declared_in(members::METHODS, class, name).map(|(by, _)| by)
}

/// The class declaring `name` as a callback of `class` (or a superclass) and the
/// callback's name, by Roblox's API (`BindableFunction.OnInvoke`,
/// `RemoteFunction.OnServerInvoke`, `MarketplaceService.ProcessReceipt`, ...).
pub fn callback(class: &str, name: &str) -> Option<(&'static str, &'static str)> {
    declared_in(members::CALLBACKS, class, name)
}

/// The member of `class` (a property, method or event Roblox's API gives it or a superclass)
/// or one of `children`'s names that `key` most likely misspells: the nearest by edit
/// distance ignoring case (so the same name in another case first), within a third of the
/// name's length (at most 3 edits); ties go to the first in member order, then children. None for a name no member
/// is near, or one too long to be a slip.
pub fn did_you_mean<'a>(
    class: &str,
    key: &str,
    children: impl Iterator<Item = &'a str>,
) -> Option<String> {
    const LONGEST: usize = 64;
    if key.is_empty() || key.len() > LONGEST {
        return None;
    }
    let db = procmodel_dom::db();
    let start = db.classes.get(class)?;
    let mut members: Vec<&str> = Vec::new();
    for c in db.superclasses_iter(start) {
        // Scripts' own names: not deprecated spellings (`brickColor`) or unscriptable ones.
        let mut props: Vec<&str> = c
            .properties
            .values()
            .filter(|p| {
                !matches!(p.scriptability, rbx_reflection::Scriptability::None)
                    && !p.tags.contains(&rbx_reflection::PropertyTag::Deprecated)
            })
            .map(|p| p.name)
            .collect();
        props.sort_unstable();
        members.extend(props);
        for table in [members::METHODS, members::EVENTS] {
            members.extend(own(table, c.name));
        }
    }
    members.extend(children);
    // Compared without case, so another case of the name is at distance 0 and wins.
    let lower = key.to_lowercase();
    let limit = (key.chars().count() / 3).clamp(1, 3);
    let mut best: Option<(usize, &str)> = None;
    for n in members {
        if n == key || n.len().abs_diff(key.len()) > limit {
            continue;
        }
        let d = edit_distance(&lower, &n.to_lowercase(), limit);
        if d <= limit && best.is_none_or(|(b, _)| d < b) {
            best = Some((d, n));
        }
    }
    best.map(|(_, n)| n.to_owned())
}

/// Levenshtein distance between `a` and `b` (by characters), or `limit + 1` once it exceeds
/// `limit`.
fn edit_distance(a: &str, b: &str, limit: usize) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut row = vec![0; b.len() + 1];
    for (i, &ca) in a.iter().enumerate() {
        row[0] = i + 1;
        let mut smallest = row[0];
        for (j, &cb) in b.iter().enumerate() {
            let cost = usize::from(ca != cb);
            row[j + 1] = (prev[j] + cost).min(prev[j + 1] + 1).min(row[j] + 1);
            smallest = smallest.min(row[j + 1]);
        }
        if smallest > limit {
            return limit + 1;
        }
        std::mem::swap(&mut prev, &mut row);
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tables_are_sorted_for_binary_search() {
        for table in [
            members::EVENTS,
            members::METHODS,
            members::CALLBACKS,
            members::PLUGIN_METHODS,
        ] {
            assert!(table.windows(2).all(|w| w[0].0 < w[1].0));
            for (class, names) in table {
                assert!(names.windows(2).all(|w| w[0] < w[1]), "{class}");
            }
        }
        for (class, name) in NOT_FIRED {
            assert_eq!(event(class, name), Event::NotFired(class), "{class}.{name}");
        }
    }

    #[test]
    fn a_misspelt_member_finds_the_one_meant() {
        let none = || std::iter::empty::<&str>();
        for (class, key, children, meant) in [
            ("Part", "Colour", &[][..], "Color"),
            ("Part", "anchored", &[], "Anchored"),
            // Scripts' own spelling, not the deprecated one the database also lists.
            ("Part", "brickcolor", &[], "BrickColor"),
            // Inherited methods and events, and children.
            ("Part", "GetChildern", &[], "GetChildren"),
            ("Part", "Touchd", &[], "Touched"),
            ("Model", "Handel", &["Handle", "Body"], "Handle"),
        ] {
            assert_eq!(
                did_you_mean(class, key, children.iter().copied()).as_deref(),
                Some(meant),
                "{class}.{key}"
            );
        }
        // Nothing near, or too far for the name's length.
        assert_eq!(did_you_mean("Part", "Foo", none()), None);
        assert_eq!(did_you_mean("Part", "Xyz", none()), None);
        assert_eq!(did_you_mean("NotAClass", "Colour", none()), None);
        assert_eq!(did_you_mean("Part", &"x".repeat(200), none()), None);
        assert_eq!(edit_distance("kitten", "sitting", 5), 3);
        assert_eq!(edit_distance("kitten", "sitting", 1), 2);
    }

    #[test]
    fn members_are_found_through_the_superclass_chain() {
        assert_eq!(event("Part", "Touched"), Event::Outside("Touched"));
        assert_eq!(event("Tool", "Activated"), Event::Outside("Activated"));
        assert_eq!(event("Part", "Activated"), Event::Unknown);
        assert_eq!(event("Workspace", "ServiceRemoving"), Event::Unknown);
        assert_eq!(
            event("DataModel", "ServiceRemoving"),
            Event::NotFired("ServiceProvider")
        );
        assert_eq!(method("Humanoid", "MoveTo"), Some("Humanoid"));
        assert_eq!(method("Part", "GetClosestPointOnSurface"), Some("BasePart"));
        assert_eq!(method("Part", "GetChildren"), Some("Instance"));
        assert_eq!(method("Part", "MoveToo"), None);
        assert_eq!(
            callback("RemoteFunction", "OnServerInvoke"),
            Some(("RemoteFunction", "OnServerInvoke"))
        );
        assert_eq!(callback("BindableEvent", "OnInvoke"), None);
        assert_eq!(
            plugin_method("ChangeHistoryService", "GetCanUndo"),
            Some("ChangeHistoryService")
        );
        assert_eq!(plugin_method("Part", "GetCanUndo"), None);
        assert_eq!(
            unavailable("UserInputService", "IsKeyDown").map(|(by, _)| by),
            Some("UserInputService")
        );
        assert_eq!(unavailable("UserInputService", "IsKeyDwn"), None);
        assert_eq!(unavailable("Part", "IsKeyDown"), None);
    }
}
