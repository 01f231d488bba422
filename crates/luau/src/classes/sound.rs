//! `Sound:Play`, `Stop`, `Pause` and `Resume` (Roblox reference): they set `Playing` (and
//! `Stop` rewinds `TimePosition` to 0) through the ordinary property writes, so the saved
//! place plays what the script started, and fire `Played`, `Stopped`, `Paused` and `Resumed`
//! with the sound's `SoundId`; `IsPlaying` and `IsPaused` read `Playing` (`props`). Nothing is heard headless and `TimePosition` does not
//! advance, so `Play` starts where a script last put it (0 after `Stop`), and `Ended` and
//! `DidLoop` never fire.

use crate::context::ctx;
use crate::methods::MethodTable;

/// Given the function that fires a sound's event: a function of (sound, method) doing the
/// method's writes and firing its event.
const SOUND_LUAU: &str = r#"
local fire = ...
return function(sound, method)
    if method == "Play" then
        sound.Playing = true
        fire(sound, "Played", sound.SoundId)
    elseif method == "Stop" then
        sound.Playing = false
        sound.TimePosition = 0
        fire(sound, "Stopped", sound.SoundId)
    elseif method == "Pause" then
        sound.Playing = false
        fire(sound, "Paused", sound.SoundId)
    else
        sound.Playing = true
        fire(sound, "Resumed", sound.SoundId)
    end
end
"#;

pub fn register(m: &mut MethodTable) {
    m.class("Sound");
    for method in ["Play", "Stop", "Pause", "Resume"] {
        m.add_method(method, move |lua, this, ()| {
            crate::methods::call_luau_method::<_, _, ()>(
                lua,
                this,
                ("procmodel.sound", "=[Sound]", SOUND_LUAU),
                || {
                    lua.create_function(|lua, (sound, event, id): (mlua::Value, String, String)| {
                        let mut c = ctx(lua)?;
                        if let Some(s) = c.instance(&sound) {
                            crate::signals::named(&mut c, s.r, &event, id);
                        }
                        Ok(())
                    })
                },
                method,
            )
        });
    }
}
