//! Where the fleet store is: `--store URL`, else `OSLAB_STORE`, else the libpq variables
//! (PGHOST, PGPORT, PGUSER, PGDATABASE, PGPASSWORD, PGSSLMODE, PGSSLROOTCERT), which also fill
//! in what a URL leaves out. The `postgres` crate reads none of these itself.
//!
//! TLS (rustls): `sslmode=disable` never encrypts; unset or `prefer` encrypts when the server
//! offers it; `require`, `verify-ca` and `verify-full` insist. Whenever the connection is
//! encrypted the server's certificate is verified, against Mozilla's roots or the CA in
//! `sslrootcert=FILE` (libpq's `prefer` and `require` do not verify; oslab does not send a
//! password to a server it cannot identify).

use std::str::FromStr;
use std::time::Duration;

use postgres::config::{Host, SslMode};

use super::error::FleetError;

/// A fleet store's address, resolved, with what it prints (password masked).
pub struct Target {
    pub(super) config: postgres::Config,
    root_cert: Option<String>,
    shown: String,
}

impl std::fmt::Debug for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Target")
            .field("shown", &self.shown)
            .finish_non_exhaustive()
    }
}

impl Target {
    /// From `--store` (`Some("")`: the flag without a URL), `OSLAB_STORE` and the libpq
    /// variables, read through `var` (the process environment, or a test's map).
    pub fn resolve(
        given: Option<&str>,
        var: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Target, FleetError> {
        let text = match given.filter(|g| !g.trim().is_empty()) {
            Some(url) => url.trim().to_string(),
            None => match var("OSLAB_STORE").filter(|v| !v.trim().is_empty()) {
                Some(url) => url.trim().to_string(),
                None if ["PGHOST", "PGDATABASE", "PGUSER"]
                    .iter()
                    .any(|k| var(k).is_some()) =>
                {
                    "postgres://".to_string()
                }
                None => return Err(FleetError::NoStore),
            },
        };
        parse(&text, var)
    }

    /// The store as printed: `postgres://USER:***@HOST:PORT/DATABASE`.
    pub fn shown(&self) -> &str {
        &self.shown
    }

    pub(super) fn password(&self) -> Option<String> {
        self.config
            .get_password()
            .map(|p| String::from_utf8_lossy(p).into_owned())
    }

    /// The TLS connector: Mozilla's roots, or the CA of `sslrootcert`.
    pub(super) fn connector(&self) -> Result<tokio_postgres_rustls::MakeRustlsConnect, FleetError> {
        use rustls::pki_types::{CertificateDer, pem::PemObject};
        let mut roots = rustls::RootCertStore::empty();
        match &self.root_cert {
            None => roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned()),
            Some(path) => {
                let bad = |reason: String| FleetError::RootCert {
                    path: path.clone(),
                    reason,
                };
                let certs = CertificateDer::pem_file_iter(path)
                    .map_err(|e| bad(e.to_string()))?
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(|e| bad(e.to_string()))?;
                if certs.is_empty() {
                    return Err(bad("no certificate in it".into()));
                }
                for cert in certs {
                    roots.add(cert).map_err(|e| bad(e.to_string()))?;
                }
            }
        }
        let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| FleetError::RootCert {
                path: "(TLS set-up)".into(),
                reason: e.to_string(),
            })?
            .with_root_certificates(roots)
            .with_no_client_auth();
        Ok(tokio_postgres_rustls::MakeRustlsConnect::new(config))
    }
}

fn parse(text: &str, var: &dyn Fn(&str) -> Option<String>) -> Result<Target, FleetError> {
    let bad = |reason: &str| FleetError::BadUrl {
        url: mask_url(text),
        reason: reason.to_string(),
    };
    let (mut config, ours) = match text
        .strip_prefix("postgres://")
        .or_else(|| text.strip_prefix("postgresql://"))
    {
        Some(rest) => parse_url(rest, var).map_err(|r| bad(&r.to_string()))?,
        None if text.contains('=') => parse_key_values(text).map_err(|r| bad(&r.to_string()))?,
        None => {
            return Err(bad("not a postgres:// URL, nor libpq's key=value form"));
        }
    };
    fill_from_env(&mut config, var).map_err(|r| bad(&r.to_string()))?;
    let mode = ours.mode.or_else(|| var("PGSSLMODE"));
    let tls = match mode.as_deref() {
        Some("disable") => SslMode::Disable,
        None | Some("allow" | "prefer") => SslMode::Prefer,
        Some("require" | "verify-ca" | "verify-full") => SslMode::Require,
        Some(other) => {
            return Err(bad(&format!(
                "sslmode={other} is not one of disable, allow, prefer, require, verify-ca, \
                 verify-full"
            )));
        }
    };
    config.ssl_mode(tls);
    config.application_name("oslab");
    config.connect_timeout(Duration::from_secs(10));
    let shown = show(&config);
    Ok(Target {
        config,
        root_cert: ours.root_cert.or_else(|| var("PGSSLROOTCERT")),
        shown,
    })
}

/// What is wrong with the text of a store's address; `FleetError::BadUrl` says it with the
/// address and the forms to give.
#[derive(Debug, thiserror::Error)]
enum UrlProblem {
    #[error("`{0}` is not key=value")]
    NotKeyValue(String),
    #[error("the value of {0} has no closing quote")]
    Unquoted(String),
    #[error("PGPORT={0} is not a port number")]
    BadPort(String),
    /// The PostgreSQL client's own parser refused what was left.
    #[error("{0}")]
    Client(#[from] postgres::Error),
}

/// The settings oslab takes out before the client parses the rest: it knows neither
/// `sslrootcert` nor the verify-* modes.
#[derive(Default)]
struct Ours {
    mode: Option<String>,
    root_cert: Option<String>,
}

impl Ours {
    /// Takes `key`'s `value` if it is one of ours.
    fn take(&mut self, key: &str, value: &str) -> bool {
        match key {
            "sslmode" => self.mode = Some(value.to_string()),
            "sslrootcert" => self.root_cert = Some(value.to_string()),
            _ => return false,
        }
        true
    }
}

/// A URL after its `postgres://`.
fn parse_url(
    rest: &str,
    var: &dyn Fn(&str) -> Option<String>,
) -> Result<(postgres::Config, Ours), UrlProblem> {
    let (base, query) = rest.split_once('?').unwrap_or((rest, ""));
    let mut kept = Vec::new();
    let mut ours = Ours::default();
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        match pair.split_once('=') {
            Some((k, v)) if ours.take(k, v) => {}
            _ => kept.push(pair),
        }
    }
    let base = with_env_port(base, var)?;
    let url = if kept.is_empty() {
        format!("postgres://{base}")
    } else {
        format!("postgres://{base}?{}", kept.join("&"))
    };
    let config = if base.is_empty() && kept.is_empty() {
        postgres::Config::new()
    } else {
        postgres::Config::from_str(&url)?
    };
    Ok((config, ours))
}

/// libpq's key=value form, `host=H port=P user=U password=W dbname=D` (values quoted with
/// `'` where they hold blanks), which the client parses once ours are out.
fn parse_key_values(text: &str) -> Result<(postgres::Config, Ours), UrlProblem> {
    let mut ours = Ours::default();
    let mut kept = Vec::new();
    for (key, value, raw) in key_values(text)? {
        if !ours.take(key, &value) {
            kept.push(raw);
        }
    }
    let config = postgres::Config::from_str(&kept.join(" "))?;
    Ok((config, ours))
}

/// The `key = value` pairs of libpq's form: each key, its value unquoted, and the pair's text
/// as written.
fn key_values(text: &str) -> Result<Vec<(&str, String, &str)>, UrlProblem> {
    let mut pairs = Vec::new();
    let mut rest = text.trim_start();
    while !rest.is_empty() {
        let start = rest;
        let eq = rest
            .find('=')
            .ok_or_else(|| UrlProblem::NotKeyValue(first_word(rest).to_string()))?;
        let key = rest[..eq].trim();
        if key.is_empty() || key.contains(char::is_whitespace) {
            return Err(UrlProblem::NotKeyValue(first_word(rest).to_string()));
        }
        rest = rest[eq + 1..].trim_start();
        let mut value = String::new();
        let mut chars = rest.char_indices();
        let end = if rest.starts_with('\'') {
            chars.next();
            loop {
                match chars.next() {
                    None => return Err(UrlProblem::Unquoted(key.to_string())),
                    Some((i, '\'')) => break i + 1,
                    Some((_, '\\')) => value.extend(chars.next().map(|(_, c)| c)),
                    Some((_, c)) => value.push(c),
                }
            }
        } else {
            let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
            value.push_str(&rest[..end]);
            end
        };
        rest = &rest[end..];
        let raw = &start[..start.len() - rest.len()];
        pairs.push((key, value, raw));
        rest = rest.trim_start();
    }
    Ok(pairs)
}

fn first_word(text: &str) -> &str {
    text.split_whitespace().next().unwrap_or(text)
}

/// The URL's authority and path with PGPORT's port where it names a host without one (the
/// client would take 5432 for it).
fn with_env_port(base: &str, var: &dyn Fn(&str) -> Option<String>) -> Result<String, UrlProblem> {
    let Some(port) = var("PGPORT") else {
        return Ok(base.to_string());
    };
    let port = port
        .trim()
        .parse::<u16>()
        .map_err(|_| UrlProblem::BadPort(port.clone()))?;
    let end = base.find('/').unwrap_or(base.len());
    let (authority, path) = base.split_at(end);
    let host_start = authority.rfind('@').map_or(0, |i| i + 1);
    let host = &authority[host_start..];
    // A port after the host, or after an IPv6 address's bracket; no host: PGHOST's, later.
    let has_port = match host.rfind(']') {
        Some(b) => host[b..].contains(':'),
        None => host.contains(':'),
    };
    if host.is_empty() || has_port {
        return Ok(base.to_string());
    }
    Ok(format!("{authority}:{port}{path}"))
}

/// What the URL leaves out, from the libpq variables; then libpq's own defaults (localhost,
/// 5432, the login name as user and database).
fn fill_from_env(
    config: &mut postgres::Config,
    var: &dyn Fn(&str) -> Option<String>,
) -> Result<(), UrlProblem> {
    if config.get_hosts().is_empty() {
        config.host(var("PGHOST").as_deref().unwrap_or("localhost"));
    }
    if config.get_ports().is_empty()
        && let Some(port) = var("PGPORT")
    {
        let port = port
            .trim()
            .parse::<u16>()
            .map_err(|_| UrlProblem::BadPort(port.clone()))?;
        config.port(port);
    }
    if config.get_user().is_none()
        && let Some(user) = var("PGUSER").or_else(|| var("USER"))
    {
        config.user(&user);
    }
    if config.get_dbname().is_none()
        && let Some(db) = var("PGDATABASE").or_else(|| config.get_user().map(str::to_string))
    {
        config.dbname(&db);
    }
    if config.get_password().is_none()
        && let Some(password) = var("PGPASSWORD")
    {
        config.password(&password);
    }
    Ok(())
}

fn show(config: &postgres::Config) -> String {
    let user = config.get_user().unwrap_or("");
    let password = if config.get_password().is_some() {
        ":***"
    } else {
        ""
    };
    let at = if user.is_empty() { "" } else { "@" };
    let host = match config.get_hosts().first() {
        Some(Host::Tcp(h)) => h.clone(),
        #[cfg(unix)]
        Some(Host::Unix(p)) => p.display().to_string(),
        None => "localhost".into(),
    };
    let port = config.get_ports().first().copied().unwrap_or(5432);
    let db = config.get_dbname().unwrap_or("");
    format!("postgres://{user}{password}{at}{host}:{port}/{db}")
}

/// Store text as it may be printed or recorded: a URL's password between `user:` and `@`,
/// and the value of every `password=` (a URL's query string, libpq's key=value form, quoted
/// or not, a whole argument such as `--store=…`) replaced by `***`.
pub fn mask_url(url: &str) -> String {
    mask_password_values(&mask_userinfo(url))
}

fn mask_userinfo(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let end = rest
        .find(|c: char| matches!(c, '/' | '?') || c.is_whitespace())
        .unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    match authority.rsplit_once('@') {
        Some((userinfo, host)) => match userinfo.split_once(':') {
            Some((user, _)) => format!("{scheme}://{user}:***@{host}{tail}"),
            None => url.to_string(),
        },
        None => url.to_string(),
    }
}

/// Every `password=VALUE` (blanks around `=` allowed) with VALUE as `***`: a value in
/// quotes up to its closing quote, else up to a blank or `&`.
fn mask_password_values(text: &str) -> String {
    const KEY: &str = "password";
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.to_ascii_lowercase().find(KEY) {
        let after = &rest[at + KEY.len()..];
        let value = after.trim_start();
        let Some(value) = value.strip_prefix('=') else {
            out.push_str(&rest[..at + KEY.len()]);
            rest = after;
            continue;
        };
        let value = value.trim_start();
        out.push_str(&rest[..rest.len() - value.len()]);
        out.push_str("***");
        rest = skip_value(value);
    }
    out.push_str(rest);
    out
}

/// What follows a key=value value: after its closing quote, or from the first blank or `&`.
fn skip_value(value: &str) -> &str {
    if let Some(quoted) = value.strip_prefix('\'') {
        let mut chars = quoted.char_indices();
        while let Some((i, c)) = chars.next() {
            match c {
                '\\' => {
                    chars.next();
                }
                '\'' => return &quoted[i + 1..],
                _ => {}
            }
        }
        return "";
    }
    let end = value
        .find(|c: char| c.is_whitespace() || c == '&')
        .unwrap_or(value.len());
    &value[end..]
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| map.get(k).cloned()
    }

    #[test]
    fn a_url_is_shown_with_its_password_masked() {
        let t = Target::resolve(
            Some("postgres://lab:s3cret@db.example:6432/fleet"),
            &env(&[]),
        )
        .unwrap();
        assert_eq!(t.shown(), "postgres://lab:***@db.example:6432/fleet");
        assert_eq!(t.password().as_deref(), Some("s3cret"));
        assert_eq!(t.config.get_ssl_mode(), SslMode::Prefer);
        assert!(!format!("{t:?}").contains("s3cret"));
    }

    #[test]
    fn libpq_variables_fill_what_the_url_leaves_out() {
        let vars = env(&[
            ("PGHOST", "10.0.0.7"),
            ("PGPORT", "5433"),
            ("PGUSER", "ci"),
            ("PGPASSWORD", "pw"),
            ("PGDATABASE", "runs"),
            ("PGSSLMODE", "require"),
        ]);
        let t = Target::resolve(Some(""), &vars).unwrap();
        assert_eq!(t.shown(), "postgres://ci:***@10.0.0.7:5433/runs");
        assert_eq!(t.config.get_ssl_mode(), SslMode::Require);
        let t = Target::resolve(Some("postgres://other@h/x?sslmode=disable"), &vars).unwrap();
        assert_eq!(t.shown(), "postgres://other:***@h:5433/x");
        assert_eq!(t.config.get_ssl_mode(), SslMode::Disable);
        // OSLAB_STORE before the variables; nothing at all is an error naming the fix.
        let t = Target::resolve(None, &env(&[("OSLAB_STORE", "postgres://a@b/c")])).unwrap();
        assert_eq!(t.shown(), "postgres://a@b:5432/c");
        assert!(matches!(
            Target::resolve(None, &env(&[])),
            Err(FleetError::NoStore)
        ));
    }

    #[test]
    fn bad_urls_are_one_line_without_the_password() {
        for (url, says) in [
            ("mysql://a:pw@b/c", "not a postgres:// URL"),
            ("postgres://a:pw@b:notaport/c", "port"),
            ("postgres://a:pw@b/c?sslmode=sometimes", "sslmode=sometimes"),
        ] {
            let e = Target::resolve(Some(url), &env(&[]))
                .unwrap_err()
                .to_string();
            assert!(e.contains(says), "{url}: {e}");
            assert!(!e.contains("pw@"), "{url}: {e}");
            assert!(!e.contains('\n'));
        }
        let e = Target::resolve(Some("postgres://h/c"), &env(&[("PGPORT", "x")]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("PGPORT=x"), "{e}");
    }

    #[test]
    fn libpq_key_value_form_is_taken() {
        let t = Target::resolve(
            Some("host=127.0.0.1 port=55432 user=u password='secret pw' dbname=fleet sslmode=verify-full sslrootcert=/ca.pem"),
            &env(&[]),
        )
        .unwrap();
        assert_eq!(t.shown(), "postgres://u:***@127.0.0.1:55432/fleet");
        assert_eq!(t.password().as_deref(), Some("secret pw"));
        assert_eq!(t.config.get_ssl_mode(), SslMode::Require);
        assert_eq!(t.root_cert.as_deref(), Some("/ca.pem"));
        let e = Target::resolve(Some("host=h password=pw sslmode=x"), &env(&[]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("sslmode=x") && !e.contains("pw "), "{e}");
        for bad in [
            "host=h password='pw",
            "host=h nonsense password=pw",
            "h:5432",
        ] {
            let e = Target::resolve(Some(bad), &env(&[]))
                .unwrap_err()
                .to_string();
            assert!(!e.contains("pw"), "{bad}: {e}");
        }
    }

    #[test]
    fn mask_url_hides_passwords_anywhere() {
        for (given, shown) in [
            (
                "host=h password=secretpw dbname=d",
                "host=h password=*** dbname=d",
            ),
            (
                "host=h password = 'a b\\' c' x=1",
                "host=h password = *** x=1",
            ),
            ("--store=postgres://u:p@h/d", "--store=postgres://u:***@h/d"),
            (
                "postgres://u:p@h/d?PASSWORD=q&x=1",
                "postgres://u:***@h/d?PASSWORD=***&x=1",
            ),
            ("password", "password"),
        ] {
            assert_eq!(mask_url(given), shown);
        }
        assert_eq!(mask_url("postgres://u:p@h/d"), "postgres://u:***@h/d");
        assert_eq!(mask_url("postgres://u@h/d"), "postgres://u@h/d");
        assert_eq!(
            mask_url("postgres://h/d?user=u&password=p"),
            "postgres://h/d?user=u&password=***"
        );
    }
}
