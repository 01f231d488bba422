//! `DateTime`: a moment as whole milliseconds since the Unix epoch, with Roblox's
//! constructors, `ToUniversalTime`/`ToLocalTime`, ISO 8601 (`ToIsoDate`, `fromIsoDate`) and
//! the moment-style `FormatUniversalTime`/`FormatLocalTime`; and Luau's `os` library
//! (`os.time` with a date table, `os.date`'s formats) over a clock the host passes in.
//!
//! Rules where the reference leaves room: there is no time zone, so local time *is*
//! universal time (a generator's output must not depend on where it runs); names of months
//! and days are English whatever the locale argument says; dates run from year 1400 to 9999
//! (the range Roblox documents), and a moment outside it is an error naming the constructor.
//! `fromUniversalTime` carries out-of-range fields over (month 13 is January of the next
//! year, minute -1 the last minute of the hour before). `DateTime.now()` is installed by the
//! host from its clock: this crate reads none.

use mlua::{Lua, MetaMethod, MultiValue, UserData, UserDataFields, UserDataMethods, Value};

use crate::args::{Args, as_ud, impl_from_lua};

/// A Roblox `DateTime`: milliseconds since 1970-01-01T00:00:00Z.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct DateTime(pub i64);

impl_from_lua!(DateTime => "DateTime");

const MS_PER_DAY: i64 = 86_400_000;

/// The first and last representable moments: 1400-01-01T00:00:00.000Z and
/// 9999-12-31T23:59:59.999Z.
fn range() -> (i64, i64) {
    (
        days_from_civil(1400, 1, 1) * MS_PER_DAY,
        days_from_civil(10000, 1, 1) * MS_PER_DAY - 1,
    )
}

/// Days since 1970-01-01 of a proleptic Gregorian date (month 1–12).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = if m > 2 { m - 3 } else { m + 9 };
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The proleptic Gregorian date (year, month 1–12, day 1–31) of a day since 1970-01-01.
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// A moment split into its calendar fields (UTC).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fields {
    pub year: i64,
    pub month: i64,
    pub day: i64,
    pub hour: i64,
    pub minute: i64,
    pub second: i64,
    pub millisecond: i64,
    /// Day of the week, 0 = Sunday.
    pub weekday: i64,
    /// Day of the year, 1–366.
    pub yearday: i64,
}

impl DateTime {
    /// The moment `ms` milliseconds after the epoch, if it lies in years 1400–9999.
    pub fn from_millis(ms: i64) -> Option<DateTime> {
        let (lo, hi) = range();
        (lo..=hi).contains(&ms).then_some(DateTime(ms))
    }

    /// `fromUniversalTime`: fields are carried over when out of range.
    pub fn from_fields(y: i64, mo: i64, d: i64, h: i64, mi: i64, s: i64, ms: i64) -> Option<Self> {
        let months = y.checked_mul(12)?.checked_add(mo - 1)?;
        let (y, m) = (months.div_euclid(12), months.rem_euclid(12) + 1);
        if !(-1_000_000..=1_000_000).contains(&y) {
            return None;
        }
        let days = days_from_civil(y, m, 1).checked_add(d - 1)?;
        let total = days
            .checked_mul(MS_PER_DAY)?
            .checked_add(h.checked_mul(3_600_000)?)?
            .checked_add(mi.checked_mul(60_000)?)?
            .checked_add(s.checked_mul(1000)?)?
            .checked_add(ms)?;
        DateTime::from_millis(total)
    }

    pub fn fields(self) -> Fields {
        let days = self.0.div_euclid(MS_PER_DAY);
        let rest = self.0.rem_euclid(MS_PER_DAY);
        let (year, month, day) = civil_from_days(days);
        Fields {
            year,
            month,
            day,
            hour: rest / 3_600_000,
            minute: rest / 60_000 % 60,
            second: rest / 1000 % 60,
            millisecond: rest % 1000,
            weekday: (days + 4).rem_euclid(7),
            yearday: days - days_from_civil(year, 1, 1) + 1,
        }
    }

    /// ISO 8601 in UTC: `2020-01-02T10:30:45Z`, with `.mmm` before the `Z` when the
    /// milliseconds are not zero (so [`DateTime::parse_iso`] gives the same moment back).
    pub fn to_iso(self) -> String {
        let f = self.fields();
        let mut s = format!(
            "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}",
            f.year, f.month, f.day, f.hour, f.minute, f.second
        );
        if f.millisecond != 0 {
            s.push_str(&format!(".{:03}", f.millisecond));
        }
        s.push('Z');
        s
    }

    /// `fromIsoDate`: `YYYY-MM-DD`, optionally `THH:MM`, `:SS`, a fraction of a second, and
    /// `Z` or an offset `±HH:MM` / `±HHMM` (a time without either is UTC). None when the
    /// string is not such a date or names an impossible one (month 13, February 30).
    pub fn parse_iso(s: &str) -> Option<DateTime> {
        let b = s.as_bytes();
        let mut at = 0;
        let num = |at: &mut usize, digits: usize| -> Option<i64> {
            let part = b.get(*at..*at + digits)?;
            if !part.iter().all(u8::is_ascii_digit) {
                return None;
            }
            *at += digits;
            std::str::from_utf8(part).ok()?.parse().ok()
        };
        let expect =
            |at: &mut usize, c: u8| -> Option<()> { (b.get(*at) == Some(&c)).then(|| *at += 1) };
        let year = num(&mut at, 4)?;
        expect(&mut at, b'-')?;
        let month = num(&mut at, 2)?;
        expect(&mut at, b'-')?;
        let day = num(&mut at, 2)?;
        let days_in_month = days_from_civil(year + i64::from(month == 12), month % 12 + 1, 1)
            - days_from_civil(year, month, 1);
        if !(1..=12).contains(&month) || day < 1 || day > days_in_month {
            return None;
        }
        let (mut h, mut mi, mut sec, mut ms, mut offset) = (0, 0, 0, 0, 0);
        if at < b.len() {
            if !matches!(b[at], b'T' | b't' | b' ') {
                return None;
            }
            at += 1;
            h = num(&mut at, 2)?;
            expect(&mut at, b':')?;
            mi = num(&mut at, 2)?;
            if b.get(at) == Some(&b':') {
                at += 1;
                sec = num(&mut at, 2)?;
                if matches!(b.get(at), Some(b'.' | b',')) {
                    at += 1;
                    let start = at;
                    while b.get(at).is_some_and(u8::is_ascii_digit) {
                        at += 1;
                    }
                    let frac = &s[start..at];
                    if frac.is_empty() {
                        return None;
                    }
                    // Milliseconds: the first three digits, the rest truncated.
                    let padded = format!("{frac:0<3}");
                    ms = padded[..3].parse().ok()?;
                }
            }
            if h > 23 || mi > 59 || sec > 59 {
                return None;
            }
            match b.get(at) {
                None => {}
                Some(b'Z' | b'z') => at += 1,
                Some(&sign @ (b'+' | b'-')) => {
                    at += 1;
                    let oh = num(&mut at, 2)?;
                    if b.get(at) == Some(&b':') {
                        at += 1;
                    }
                    let om = num(&mut at, 2)?;
                    if oh > 23 || om > 59 {
                        return None;
                    }
                    offset = (oh * 60 + om) * if sign == b'+' { 1 } else { -1 };
                }
                Some(_) => return None,
            }
        }
        if at != b.len() {
            return None;
        }
        DateTime::from_fields(year, month, day, h, mi - offset, sec, ms)
    }

    /// `FormatUniversalTime(format, locale)`: moment.js tokens, English names, `[...]`
    /// copied as it is.
    pub fn format(self, fmt: &str) -> String {
        let f = self.fields();
        let mut out = String::new();
        let mut rest = fmt;
        while let Some(c) = rest.chars().next() {
            if c == '[' {
                match rest.find(']') {
                    Some(end) => {
                        out.push_str(&rest[1..end]);
                        rest = &rest[end + 1..];
                    }
                    // An unclosed bracket is text like any other.
                    None => {
                        out.push_str(rest);
                        rest = "";
                    }
                }
                continue;
            }
            match TOKENS.iter().find(|t| rest.starts_with(**t)) {
                Some(t) => {
                    match LOCALIZED.iter().find(|(name, _)| name == t) {
                        Some((_, expansion)) => out.push_str(&self.format(expansion)),
                        None => token(&mut out, t, &f, self.0),
                    }
                    rest = &rest[t.len()..];
                }
                None => {
                    out.push(c);
                    rest = &rest[c.len_utf8()..];
                }
            }
        }
        out
    }
}

/// Format tokens, longest first where one is a prefix of another.
const TOKENS: &[&str] = &[
    "LLLL", "LLL", "LTS", "LT", "LL", "L", "llll", "lll", "ll", "l", "YYYY", "YY", "MMMM", "MMM",
    "MM", "Mo", "M", "DDDD", "DDDo", "DDD", "DD", "Do", "D", "dddd", "ddd", "dd", "do", "d", "Qo",
    "Q", "HH", "H", "hh", "h", "kk", "k", "mm", "m", "ss", "s", "SSSS", "SSS", "SS", "S", "A", "a",
    "X", "x",
];

/// The localized formats, as en-us spells them.
const LOCALIZED: &[(&str, &str)] = &[
    ("LT", "h:mm A"),
    ("LTS", "h:mm:ss A"),
    ("L", "MM/DD/YYYY"),
    ("l", "M/D/YYYY"),
    ("LL", "MMMM D, YYYY"),
    ("ll", "MMM D, YYYY"),
    ("LLL", "MMMM D, YYYY h:mm A"),
    ("lll", "MMM D, YYYY h:mm A"),
    ("LLLL", "dddd, MMMM D, YYYY h:mm A"),
    ("llll", "ddd, MMM D, YYYY h:mm A"),
];

const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];
const DAYS: [&str; 7] = [
    "Sunday",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
];

fn ordinal(n: i64) -> String {
    let suffix = match (n % 10, n % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

fn token(out: &mut String, t: &str, f: &Fields, ms: i64) {
    let h12 = if f.hour % 12 == 0 { 12 } else { f.hour % 12 };
    let month = MONTHS[(f.month - 1) as usize];
    let day = DAYS[f.weekday as usize];
    let quarter = (f.month - 1) / 3 + 1;
    let s = match t {
        "YYYY" => format!("{:04}", f.year),
        "YY" => format!("{:02}", f.year % 100),
        "MMMM" => month.to_owned(),
        "MMM" => month[..3].to_owned(),
        "MM" => format!("{:02}", f.month),
        "Mo" => ordinal(f.month),
        "M" => f.month.to_string(),
        "DDDD" => format!("{:03}", f.yearday),
        "DDDo" => ordinal(f.yearday),
        "DDD" => f.yearday.to_string(),
        "DD" => format!("{:02}", f.day),
        "Do" => ordinal(f.day),
        "D" => f.day.to_string(),
        "dddd" => day.to_owned(),
        "ddd" => day[..3].to_owned(),
        "dd" => day[..2].to_owned(),
        "do" => ordinal(f.weekday),
        "d" => f.weekday.to_string(),
        "Qo" => ordinal(quarter),
        "Q" => quarter.to_string(),
        "HH" => format!("{:02}", f.hour),
        "H" => f.hour.to_string(),
        "hh" => format!("{h12:02}"),
        "h" => h12.to_string(),
        "kk" => format!("{:02}", if f.hour == 0 { 24 } else { f.hour }),
        "k" => (if f.hour == 0 { 24 } else { f.hour }).to_string(),
        "mm" => format!("{:02}", f.minute),
        "m" => f.minute.to_string(),
        "ss" => format!("{:02}", f.second),
        "s" => f.second.to_string(),
        "SSSS" => format!("{:03}0", f.millisecond),
        "SSS" => format!("{:03}", f.millisecond),
        "SS" => format!("{:02}", f.millisecond / 10),
        "S" => (f.millisecond / 100).to_string(),
        "A" => (if f.hour < 12 { "AM" } else { "PM" }).to_owned(),
        "a" => (if f.hour < 12 { "am" } else { "pm" }).to_owned(),
        "X" => ms.div_euclid(1000).to_string(),
        "x" => ms.to_string(),
        _ => t.to_owned(),
    };
    out.push_str(&s);
}

fn fields_table(lua: &Lua, d: DateTime) -> mlua::Result<mlua::Table> {
    let f = d.fields();
    let t = lua.create_table_with_capacity(0, 7)?;
    t.raw_set("Year", f.year)?;
    t.raw_set("Month", f.month)?;
    t.raw_set("Day", f.day)?;
    t.raw_set("Hour", f.hour)?;
    t.raw_set("Minute", f.minute)?;
    t.raw_set("Second", f.second)?;
    t.raw_set("Millisecond", f.millisecond)?;
    Ok(t)
}

fn out_of_range(func: &str) -> mlua::Error {
    mlua::Error::runtime(format!(
        "{func}: the date is out of range (DateTime covers the years 1400 to 9999)"
    ))
}

/// A whole number from argument `pos` (fractions truncated toward zero), or its default.
fn int_arg(a: &Args, pos: usize, default: i64) -> mlua::Result<i64> {
    let n = a.opt_number(pos, default as f64)?;
    if !n.is_finite() {
        return Err(a.error(pos, "number must be finite"));
    }
    Ok(n.trunc().clamp(-9.0e15, 9.0e15) as i64)
}

/// A number of milliseconds from seconds or milliseconds given as a Luau number.
fn millis(a: &Args, pos: usize, scale: f64, func: &str) -> mlua::Result<DateTime> {
    let n = a.number(pos)?;
    if !n.is_finite() {
        return Err(a.error(pos, "number must be finite"));
    }
    let ms = (n * scale).floor();
    if ms.abs() > 9.0e15 {
        return Err(out_of_range(func));
    }
    DateTime::from_millis(ms as i64).ok_or_else(|| out_of_range(func))
}

impl UserData for DateTime {
    fn add_fields<F: UserDataFields<Self>>(f: &mut F) {
        f.add_meta_field(MetaMethod::Type, "DateTime");
        f.add_field_method_get("UnixTimestamp", |_, d| Ok(d.0.div_euclid(1000)));
        f.add_field_method_get("UnixTimestampMillis", |_, d| Ok(d.0));
    }

    fn add_methods<M: UserDataMethods<Self>>(m: &mut M) {
        for name in ["ToUniversalTime", "ToLocalTime"] {
            m.add_method(name, |lua, d, ()| fields_table(lua, *d));
        }
        m.add_method("ToIsoDate", |_, d, ()| Ok(d.to_iso()));
        for name in ["FormatUniversalTime", "FormatLocalTime"] {
            m.add_method(name, move |_, d, a: MultiValue| {
                let a = Args::new(name, a);
                let fmt = a.string(1)?;
                a.string(2)?;
                Ok(d.format(&fmt))
            });
        }
        m.add_meta_method(MetaMethod::ToString, |_, d, ()| Ok(d.to_iso()));
        crate::args::value_meta::<DateTime, M>(m, "DateTime");
        m.add_meta_function(MetaMethod::Lt, |_, (a, b): (Value, Value)| {
            Ok(compare(&a, &b, "__lt")? == std::cmp::Ordering::Less)
        });
        m.add_meta_function(MetaMethod::Le, |_, (a, b): (Value, Value)| {
            Ok(compare(&a, &b, "__le")? != std::cmp::Ordering::Greater)
        });
    }
}

fn compare(a: &Value, b: &Value, op: &str) -> mlua::Result<std::cmp::Ordering> {
    match (as_ud::<DateTime>(a), as_ud::<DateTime>(b)) {
        (Some(x), Some(y)) => Ok(x.cmp(&y)),
        _ => Err(mlua::Error::runtime(format!(
            "attempt to compare DateTime with {} ({op})",
            crate::type_name(if as_ud::<DateTime>(a).is_some() { b } else { a })
        ))),
    }
}

/// Installs the `DateTime` constructor table (without `now`, which the host adds).
pub(crate) fn register(lua: &Lua) -> mlua::Result<()> {
    let t = lua.create_table()?;
    t.raw_set(
        "fromUnixTimestamp",
        lua.create_function(|_, a: MultiValue| {
            millis(
                &Args::new("fromUnixTimestamp", a),
                1,
                1000.0,
                "fromUnixTimestamp",
            )
        })?,
    )?;
    t.raw_set(
        "fromUnixTimestampMillis",
        lua.create_function(|_, a: MultiValue| {
            let f = "fromUnixTimestampMillis";
            millis(&Args::new(f, a), 1, 1.0, f)
        })?,
    )?;
    for name in ["fromUniversalTime", "fromLocalTime"] {
        t.raw_set(
            name,
            lua.create_function(move |_, a: MultiValue| {
                let a = Args::new(name, a);
                let v = [
                    int_arg(&a, 1, 1970)?,
                    int_arg(&a, 2, 1)?,
                    int_arg(&a, 3, 1)?,
                    int_arg(&a, 4, 0)?,
                    int_arg(&a, 5, 0)?,
                    int_arg(&a, 6, 0)?,
                    int_arg(&a, 7, 0)?,
                ];
                DateTime::from_fields(v[0], v[1], v[2], v[3], v[4], v[5], v[6])
                    .ok_or_else(|| out_of_range(name))
            })?,
        )?;
    }
    t.raw_set(
        "fromIsoDate",
        lua.create_function(|_, a: MultiValue| {
            let a = Args::new("fromIsoDate", a);
            Ok(DateTime::parse_iso(&a.string(1)?))
        })?,
    )?;
    crate::args::install_global(lua, "DateTime", t)
}

/// Luau's `os.time(table)`: the seconds since the epoch of a date read as universal time,
/// fields carried over when out of range (month 13 is January of the next year), or None
/// for a day before 1970-01-01 or a moment before the epoch, where Luau gives nil.
fn os_time(year: i64, month: i64, day: i64, hour: i64, min: i64, sec: i64) -> Option<i64> {
    let months = year.checked_mul(12)?.checked_add(month - 1)?;
    let (y, m) = (months.div_euclid(12), months.rem_euclid(12) + 1);
    let days = days_from_civil(y, m, 1).checked_add(day - 1)?;
    let secs = days
        .checked_mul(86_400)?
        .checked_add(hour.checked_mul(3600)?)?
        .checked_add(min.checked_mul(60)?)?
        .checked_add(sec)?;
    (days >= 0 && secs >= 0).then_some(secs)
}

/// The calendar fields of `t` seconds after the epoch (UTC), or None when its year is out
/// of C's `int` range (where `gmtime` fails and Luau's `os.date` gives nil).
fn os_fields(t: i64) -> Option<Fields> {
    let f = DateTime(t.checked_mul(1000)?).fields();
    i32::try_from(f.year - 1900).ok().map(|_| f)
}

/// The conversions Luau's `os.date` accepts after `%`.
const OS_DATE_CONVERSIONS: &str = "aAbBcdHIjmMpSUwWxXyYzZ%";

/// Luau's `os.date` format (`strftime` in the C locale) of `f`; `zone` is what `%Z` writes.
/// A `%` before a character that is not a conversion is an error (that character); a `%`
/// at the end is kept.
fn os_strftime(format: &str, f: &Fields, zone: &str) -> Result<String, char> {
    let mut out = String::new();
    let mut chars = format.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let Some(k) = chars.clone().next() else {
            out.push('%');
            break;
        };
        if !OS_DATE_CONVERSIONS.contains(k) {
            return Err(k);
        }
        chars.next();
        conversion(&mut out, k, f, zone);
    }
    Ok(out)
}

fn conversion(out: &mut String, k: char, f: &Fields, zone: &str) {
    use std::fmt::Write;
    let month = MONTHS[(f.month - 1) as usize];
    let day = DAYS[f.weekday as usize];
    let h12 = if f.hour % 12 == 0 { 12 } else { f.hour % 12 };
    // Weeks of the year: the first Sunday (%U) or Monday (%W) starts week 1.
    let yday0 = f.yearday - 1;
    let _ = match k {
        'a' => write!(out, "{}", &day[..3]),
        'A' => write!(out, "{day}"),
        'b' => write!(out, "{}", &month[..3]),
        'B' => write!(out, "{month}"),
        'c' => write!(
            out,
            "{} {} {:2} {:02}:{:02}:{:02} {}",
            &day[..3],
            &month[..3],
            f.day,
            f.hour,
            f.minute,
            f.second,
            f.year
        ),
        'd' => write!(out, "{:02}", f.day),
        'H' => write!(out, "{:02}", f.hour),
        'I' => write!(out, "{h12:02}"),
        'j' => write!(out, "{:03}", f.yearday),
        'm' => write!(out, "{:02}", f.month),
        'M' => write!(out, "{:02}", f.minute),
        'p' => write!(out, "{}", if f.hour < 12 { "AM" } else { "PM" }),
        'S' => write!(out, "{:02}", f.second),
        'U' => write!(out, "{:02}", (yday0 + 7 - f.weekday) / 7),
        'w' => write!(out, "{}", f.weekday),
        'W' => write!(out, "{:02}", (yday0 + 7 - (f.weekday + 6) % 7) / 7),
        'x' => write!(
            out,
            "{:02}/{:02}/{:02}",
            f.month,
            f.day,
            f.year.rem_euclid(100)
        ),
        'X' => write!(out, "{:02}:{:02}:{:02}", f.hour, f.minute, f.second),
        'y' => write!(out, "{:02}", f.year.rem_euclid(100)),
        'Y' => write!(out, "{}", f.year),
        'z' => write!(out, "+0000"),
        'Z' => write!(out, "{zone}"),
        _ => write!(out, "%"),
    };
}

/// Luau's `os` library on a clock the host supplies (`now`, in seconds since the epoch):
/// `clock`, `time`, `difftime` and `date`, with Luau's rules for date tables and formats.
/// There is no time zone: local time is universal time (`%Z` writes `UTC`, and `GMT` after
/// `!`, as glibc does with `TZ=UTC`).
pub fn os_library(lua: &Lua, now: fn(&Lua) -> f64) -> mlua::Result<mlua::Table> {
    let os = lua.create_table()?;
    os.set("clock", lua.create_function(move |lua, ()| Ok(now(lua)))?)?;
    os.set(
        "time",
        lua.create_function(move |lua, args: MultiValue| {
            let args = Args::new("time", args);
            if args.is_nil(1) {
                return Ok(Some(now(lua).floor()));
            }
            let date = args.table(1)?;
            let field = |key: &str, default: Option<i64>| -> mlua::Result<i64> {
                let v: Value = date.raw_get(key)?;
                match lua.coerce_number(v)? {
                    // C's `(int)` of the number, as Luau's `lua_tointeger`.
                    Some(n) => Ok(n.trunc().clamp(f64::from(i32::MIN), f64::from(i32::MAX)) as i64),
                    None => default.ok_or_else(|| {
                        mlua::Error::runtime(format!("field '{key}' missing in date table"))
                    }),
                }
            };
            let (sec, min, hour) = (
                field("sec", Some(0))?,
                field("min", Some(0))?,
                field("hour", Some(12))?,
            );
            let (day, month, year) = (
                field("day", None)?,
                field("month", None)?,
                field("year", None)?,
            );
            Ok(os_time(year, month, day, hour, min, sec).map(|t| t as f64))
        })?,
    )?;
    os.set(
        "difftime",
        lua.create_function(|lua, args: MultiValue| {
            let args = Args::new("difftime", args);
            let a = os_number(lua, &args, 1)?;
            let b = if args.is_nil(2) {
                0.0
            } else {
                os_number(lua, &args, 2)?
            };
            Ok(a - b)
        })?,
    )?;
    os.set(
        "date",
        lua.create_function(move |lua, args: MultiValue| {
            let args = Args::new("date", args);
            let format = match args.get(1) {
                Value::Nil => "%c".to_owned(),
                Value::String(s) => s.to_string_lossy(),
                v @ (Value::Integer(_) | Value::Number(_)) => lua
                    .coerce_string(v.clone())?
                    .map(|s| s.to_string_lossy())
                    .unwrap_or_default(),
                _ => return Err(args.bad(1, "string")),
            };
            let t = if args.is_nil(2) {
                now(lua).floor()
            } else {
                os_number(lua, &args, 2)?
            };
            let (format, utc) = match format.strip_prefix('!') {
                Some(rest) => (rest, true),
                None => (format.as_str(), false),
            };
            // C's `(time_t)` of the number; Luau gives nil for a local time before the epoch.
            let fields = (t.is_finite() && t.abs() < 9.2e18)
                .then(|| t.trunc() as i64)
                .filter(|&t| utc || t >= 0)
                .and_then(os_fields);
            let Some(f) = fields else {
                return Ok(Value::Nil);
            };
            if format == "*t" {
                let t = lua.create_table_with_capacity(0, 9)?;
                t.set("sec", f.second)?;
                t.set("min", f.minute)?;
                t.set("hour", f.hour)?;
                t.set("day", f.day)?;
                t.set("month", f.month)?;
                t.set("year", f.year)?;
                t.set("wday", f.weekday + 1)?;
                t.set("yday", f.yearday)?;
                t.set("isdst", false)?;
                return Ok(Value::Table(t));
            }
            let zone = if utc { "GMT" } else { "UTC" };
            match os_strftime(format, &f, zone) {
                Ok(s) => Ok(Value::String(lua.create_string(s)?)),
                Err(_) => Err(args.error(1, "invalid conversion specifier")),
            }
        })?,
    )?;
    Ok(os)
}

/// A number argument of the os library, which (as Luau's) takes numeric strings too.
fn os_number(lua: &Lua, args: &Args, pos: usize) -> mlua::Result<f64> {
    lua.coerce_number(args.get(pos).clone())?
        .ok_or_else(|| args.bad(pos, "number"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_round_trips_over_the_whole_range() {
        let (lo, hi) = range();
        let mut day = lo / MS_PER_DAY;
        while day <= hi / MS_PER_DAY {
            let (y, m, d) = civil_from_days(day);
            assert_eq!(days_from_civil(y, m, d), day);
            day += 7;
        }
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(-1), (1969, 12, 31));
        assert_eq!(
            days_from_civil(2000, 3, 1) - days_from_civil(2000, 2, 28),
            2
        );
        assert_eq!(
            days_from_civil(1900, 3, 1) - days_from_civil(1900, 2, 28),
            1
        );
    }

    #[test]
    fn fields_and_iso() {
        let d = DateTime::from_fields(2020, 1, 2, 10, 30, 45, 0).unwrap();
        assert_eq!(d.to_iso(), "2020-01-02T10:30:45Z");
        assert_eq!(d.0, 1_577_961_045_000);
        assert_eq!(d.fields().weekday, 4); // a Thursday
        let e = DateTime(d.0 + 7);
        assert_eq!(e.to_iso(), "2020-01-02T10:30:45.007Z");
        assert_eq!(DateTime::parse_iso(&e.to_iso()), Some(e));
        assert_eq!(
            DateTime::parse_iso("2020-01-02T12:30:45+02:00"),
            Some(d),
            "an offset is subtracted"
        );
        assert_eq!(DateTime::parse_iso("2021-02-29"), None);
        assert_eq!(DateTime::parse_iso("2020-13-01"), None);
        assert_eq!(DateTime::parse_iso("2020-01-02T10:30:45Zjunk"), None);
        assert_eq!(DateTime::parse_iso(""), None);
        // Carrying: month 13 of 2019 is January 2020; minute -1 is 23:59 of the day before.
        assert_eq!(DateTime::from_fields(2019, 13, 2, 10, 30, 45, 0), Some(d));
        assert_eq!(
            DateTime::from_fields(1970, 1, 1, 0, -1, 0, 0)
                .unwrap()
                .to_iso(),
            "1969-12-31T23:59:00Z"
        );
        assert_eq!(DateTime::from_fields(10000, 1, 1, 0, 0, 0, 0), None);
        assert_eq!(DateTime::from_fields(1399, 12, 31, 23, 59, 59, 999), None);
    }

    #[test]
    fn moment_tokens() {
        let d = DateTime::from_fields(1986, 9, 4, 20, 30, 25, 123).unwrap();
        assert_eq!(d.format("LLLL"), "Thursday, September 4, 1986 8:30 PM");
        assert_eq!(d.format("llll"), "Thu, Sep 4, 1986 8:30 PM");
        assert_eq!(d.format("L LT LTS"), "09/04/1986 8:30 PM 8:30:25 PM");
        assert_eq!(
            d.format("YYYY-MM-DD HH:mm:ss.SSS"),
            "1986-09-04 20:30:25.123"
        );
        assert_eq!(
            d.format("Do MMM YY [at] h a, Qo"),
            "4th Sep 86 at 8 pm, 3rd"
        );
        assert_eq!(d.format("DDDD DDD dd d"), "247 247 Th 4");
        assert_eq!(d.format("[unclosed"), "[unclosed");
        let midnight = DateTime::from_fields(2001, 1, 11, 0, 5, 0, 0).unwrap();
        assert_eq!(midnight.format("h hh k A Do"), "12 12 24 AM 11th");
    }

    #[test]
    fn os_time_reads_a_date_as_universal_time() {
        assert_eq!(os_time(1970, 1, 1, 0, 0, 0), Some(0));
        assert_eq!(os_time(2020, 1, 1, 0, 0, 0), Some(1_577_836_800));
        // Lua's default hour is noon; the caller passes it.
        assert_eq!(os_time(2000, 2, 29, 12, 0, 0), Some(951_825_600));
        // Out-of-range fields carry over.
        assert_eq!(os_time(2019, 13, 1, 0, 0, 0), os_time(2020, 1, 1, 0, 0, 0));
        assert_eq!(os_time(2020, 3, 0, 0, 0, 0), os_time(2020, 2, 29, 0, 0, 0));
        assert_eq!(
            os_time(2020, 1, 1, 0, 0, -1),
            os_time(2019, 12, 31, 23, 59, 59)
        );
        assert_eq!(os_time(2020, -5, 1, 0, 0, 0), os_time(2019, 7, 1, 0, 0, 0));
        // Before the epoch: nil, also for a day before it that hours bring past it.
        assert_eq!(os_time(1969, 12, 31, 23, 59, 59), None);
        assert_eq!(os_time(1969, 12, 31, 48, 0, 0), None);
        assert_eq!(os_time(i64::MAX, 1, 1, 0, 0, 0), None);
    }

    #[test]
    fn os_strftime_writes_the_c_locale() {
        // 2021-03-04T05:06:07Z, a Thursday, day 63 of the year.
        let f = os_fields(1_614_834_367).unwrap();
        let all = "%a|%A|%b|%B|%c|%d|%H|%I|%j|%m|%M|%p|%S|%U|%w|%W|%x|%X|%y|%Y|%z|%Z|%%";
        assert_eq!(
            os_strftime(all, &f, "UTC").unwrap(),
            "Thu|Thursday|Mar|March|Thu Mar  4 05:06:07 2021|04|05|05|063|03|06|AM|07|09|4|09|03/04/21|05:06:07|21|2021|+0000|UTC|%"
        );
        assert_eq!(
            os_strftime("%Y-%m-%d %H:%M:%S", &os_fields(0).unwrap(), "GMT").unwrap(),
            "1970-01-01 00:00:00"
        );
        // Noon and midnight on the 12-hour clock; weeks before the first Sunday/Monday.
        let f = os_fields(os_time(2023, 1, 1, 12, 30, 0).unwrap()).unwrap();
        assert_eq!(
            os_strftime("%I %p %U %W %w", &f, "").unwrap(),
            "12 PM 01 00 0"
        );
        let f = os_fields(os_time(2024, 12, 31, 0, 0, 0).unwrap()).unwrap();
        assert_eq!(
            os_strftime("%I %p %j %U %W", &f, "").unwrap(),
            "12 AM 366 52 53"
        );
        assert_eq!(os_strftime("100%", &f, "").unwrap(), "100%");
        assert_eq!(os_strftime("%Q", &f, ""), Err('Q'));
        assert_eq!(os_strftime("%E", &f, ""), Err('E'));
        assert!(os_fields(i64::MAX / 2).is_none());
    }
}
