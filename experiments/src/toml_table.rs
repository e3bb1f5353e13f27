//! Typed config tables (a leaf: imports no other module of the harness).

/// Deserialises one table of a config (`[params]` point, `[data]`, ...) into its typed form,
/// straight from the parsed TOML (no text round trip); an error names the key path, e.g.
/// `params.lifetime: invalid type: string "x", expected f64` or `params.c.b: unknown field ...`.
pub fn typed_table<T: serde::de::DeserializeOwned>(
    table: toml::Table,
    prefix: &str,
) -> Result<T, String> {
    serde_path_to_error::deserialize(toml::Value::Table(table)).map_err(|e| {
        let path = e.path().to_string();
        let message = e.into_inner().message().to_string();
        if path == "." {
            format!("{prefix}: {message}")
        } else {
            format!("{prefix}.{path}: {message}")
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(deny_unknown_fields)]
    struct Inner {
        a: f64,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(deny_unknown_fields)]
    struct Point {
        lifetime: f64,
        n: usize,
        c: Option<Inner>,
    }

    fn typed(text: &str) -> Result<Point, String> {
        typed_table(toml::from_str(text).unwrap(), "params")
    }

    #[test]
    fn errors_name_the_key_path() {
        assert_eq!(
            typed("lifetime = 3\nn = 2").unwrap(),
            Point {
                lifetime: 3.0,
                n: 2,
                c: None
            }
        );
        assert_eq!(
            typed("lifetime = 'x'\nn = 2").unwrap_err(),
            "params.lifetime: invalid type: string \"x\", expected f64"
        );
        assert!(typed("lifetime = 1.0\nn = 2\nx = 1")
            .unwrap_err()
            .starts_with("params.x: unknown field `x`"));
        assert!(typed("lifetime = 1.0\nn = -2")
            .unwrap_err()
            .starts_with("params.n: invalid value: integer `-2`"));
        assert!(typed("lifetime = 1.0\nn = 2\nc = { b = 1 }")
            .unwrap_err()
            .starts_with("params.c.b: unknown field `b`"));
        assert_eq!(
            typed("n = 2").unwrap_err(),
            "params: missing field `lifetime`"
        );
    }
}
