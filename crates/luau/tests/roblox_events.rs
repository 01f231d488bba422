//! The Roblox instance/events/services conformance corpus: one #[test] per script.
mod common;

roblox_tests!("events":
    signals,
    attributes,
    hierarchy,
    bindables,
    never_firing,
    run_service,
    services,
    http_service,
    collection_service,
    change_history,
    deprecated,
    wait_for_child,
    stale_references,
    tweens,
    sound,
    destroy,
    services_locked,
    no_change_no_signal,
    collection_membership,
    value_changed,
    reentrancy,
    log_output,
    actor_messages,
    lighting_changed,
);
