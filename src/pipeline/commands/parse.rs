//! The checks of the program's numeric options (clap `value_parser`s): durations,
//! counts and seeds, each with a message that says what is allowed.

/// Reads a duration option (`--seconds`, `--pendulum-seconds`, `--rps-seconds`): a
/// number of seconds, positive and finite.
///
/// # Errors
/// The message for the option (clap prefixes it with the option's name): not a number,
/// or not positive and finite (`NaN`, `-1`, `0`, and `1e400`, which overflows to ∞).
pub fn parse_positive_seconds(text: &str) -> Result<f64, String> {
    let t = text.trim();
    match t.parse::<f64>() {
        Ok(x) if x.is_finite() && x > 0.0 => Ok(x),
        Ok(_) => Err(format!("must be positive and finite (s), got {t}")),
        Err(_) => Err(format!(
            "must be a number of seconds, positive and finite (e.g. 2.5 or 1e-3), got '{t}'"
        )),
    }
}

/// Reads `--seconds` of `run`, `pendulum`, `compare` and `sweep` as
/// [`parse_positive_seconds`] does, and returns the text to apply as `run.duration`:
/// as typed when TOML reads it as the same number (so the run's `scene.toml`, summary
/// and sweep table show what was typed), else the shortest text that reads back to it
/// (`.5` becomes `0.5`).
///
/// # Errors
/// As [`parse_positive_seconds`].
pub fn parse_seconds(text: &str) -> Result<String, String> {
    let x = parse_positive_seconds(text)?;
    let t = text.trim();
    let toml_value = format!("v = {t}")
        .parse::<toml::Table>()
        .ok()
        .and_then(|v| match v.get("v") {
            Some(toml::Value::Float(f)) => Some(*f),
            Some(toml::Value::Integer(i)) => Some(*i as f64),
            _ => None,
        });
    Ok(if toml_value == Some(x) {
        t.to_string()
    } else {
        format!("{x:?}")
    })
}

/// Reads a count option (`--states`, `--jobs`, `--reference-elements`): a whole number
/// ≥ 0 that fits the platform's `usize`.
///
/// # Errors
/// The message for the option (clap prefixes it with the option's name).
pub fn parse_count(text: &str) -> Result<usize, String> {
    parse_seed(text).and_then(|n| {
        usize::try_from(n).map_err(|_| format!("must be at most {}, got {}", usize::MAX, n))
    })
}

/// Reads `--seed`: a whole number from 0 to 2⁶⁴ − 1.
///
/// # Errors
/// The message for the option (clap prefixes it with the option's name).
pub fn parse_seed(text: &str) -> Result<u64, String> {
    let t = text.trim();
    t.parse::<u64>().map_err(|_| match t.parse::<i128>() {
        Ok(n) if n < 0 => format!("must be a whole number >= 0, got {t}"),
        Ok(_) => format!("must be at most {}, got {t}", u64::MAX),
        Err(_) => format!("must be a whole number >= 0 (e.g. 100), got '{t}'"),
    })
}
