package llm

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"sort"
	"strings"
)

// Masking secrets in what baton prints, saves and sends.
//
// A secret reaches baton in two places: the API key, and the base URL of a
// gateway, which may carry credentials in its user information
// (https://user:pass@host), in its path (https://gw/<token>/v1) or in its
// query string (?key=...). Error texts quote both: providers echo keys back,
// and transport errors quote the URL they failed to reach. A Redactor masks
// the exact secrets it was given and, in any text, the parts of every URL
// that can hold one, so that a secret the Redactor was not told about is still
// hidden when it appears in a URL.
//
// Which parts of a URL count as secret:
//   - user information (everything between "://" and the last "@" before the
//     query string; in text that does not parse, an "@" in the path is taken
//     for the end of user information, which errs on the side of masking),
//     always;
//   - query values (the names stay, so "?key=[redacted]" still says what was
//     configured), and a fragment;
//   - every path segment that is not a plain API word. A plain word is a
//     version ("v1", "v2.1", "v1beta") or at most 20 lowercase letters,
//     hyphens, underscores and dots ("api", "openai", "chat", "messages",
//     "serving-endpoints"). Anything with a digit outside a version, a
//     capital letter, an escape or more length may be a token and is masked;
//     an Azure deployment name such as "gpt-4o" is masked too, which costs a
//     little readability and nothing else.
//
// The host and port are never masked: they say where baton tried to go.

// Redacted replaces every masked secret.
const Redacted = "[redacted]"

// minSecret is the shortest value masked wherever it appears. Shorter values
// (a test key "k") would mangle every message; they are still masked inside
// URLs by the structural scrub.
const minSecret = 3

// Redactor masks a fixed set of secrets, and the secret parts of URLs, in
// text. It is safe for concurrent use. The zero value and nil mask URLs
// only. fmt never prints the secrets it holds.
type Redactor struct {
	secrets []string // longest first, so a secret that contains another is masked whole
}

// NewRedactor returns a Redactor for secrets; empty and very short values
// are ignored. The URL-escaped forms of each secret are masked too.
func NewRedactor(secrets ...string) *Redactor {
	seen := map[string]bool{}
	var out []string
	add := func(s string) {
		if len(s) >= minSecret && !seen[s] && s != Redacted {
			seen[s] = true
			out = append(out, s)
		}
	}
	for _, s := range secrets {
		add(s)
		add(url.PathEscape(s))
		add(url.QueryEscape(s))
		if u, err := url.PathUnescape(s); err == nil {
			add(u)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return &Redactor{secrets: out}
}

// With returns a Redactor that masks r's secrets and more.
func (r *Redactor) With(secrets ...string) *Redactor {
	if r == nil {
		return NewRedactor(secrets...)
	}
	return NewRedactor(append(append([]string(nil), r.secrets...), secrets...)...)
}

// String says how many secrets r holds, never what they are.
func (r *Redactor) String() string {
	n := 0
	if r != nil {
		n = len(r.secrets)
	}
	return fmt.Sprintf("llm.Redactor{%d secrets}", n)
}

// GoString keeps %#v from printing the secrets.
func (r *Redactor) GoString() string { return r.String() }

// Text masks every secret of r in s, then the secret parts of every URL in s.
func (r *Redactor) Text(s string) string {
	if r != nil {
		for _, sec := range r.secrets {
			s = replaceSecret(s, sec)
		}
	}
	return ScrubURLs(s)
}

// Error returns err, or, when its text holds something to mask, an error
// whose text is masked. The masked error still answers errors.Is for every
// error in err's chain (a yes or no tells nothing secret), and errors.As for
// a *ProviderError, which is a copy with its Message and Err masked, so the
// retry policy decides on it exactly as on the original. Nothing else of the
// original chain can be reached from it, since anything reachable could print
// the secret.
func (r *Redactor) Error(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	masked := r.Text(msg)
	if masked == msg {
		return err
	}
	var pe *ProviderError
	if !errors.As(err, &pe) {
		return &redactedError{msg: masked, orig: err}
	}
	cp := *pe
	cp.Message = r.Text(pe.Message)
	if pe.Err != nil {
		cp.Err = r.Error(pe.Err)
	}
	if top, ok := err.(*ProviderError); ok && top == pe {
		return &cp
	}
	return &redactedError{msg: masked, orig: err, pe: &cp}
}

// redactedError is an error with its text masked; see Redactor.Error.
type redactedError struct {
	msg  string
	orig error
	pe   *ProviderError // masked copy, or nil
}

func (e *redactedError) Error() string { return e.msg }

func (e *redactedError) Is(target error) bool { return errors.Is(e.orig, target) }

func (e *redactedError) Unwrap() error {
	if e.pe == nil {
		return nil
	}
	return e.pe
}

// replaceSecret masks sec in s. A short secret is masked only where it
// stands alone (not inside a longer word), so a five-letter key does not eat
// into ordinary words; a long one is masked wherever it appears.
func replaceSecret(s, sec string) string {
	if len(sec) >= 8 {
		return strings.ReplaceAll(s, sec, Redacted)
	}
	var b strings.Builder
	for {
		i := strings.Index(s, sec)
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		end := i + len(sec)
		alone := (i == 0 || !isWordByte(s[i-1])) && (end == len(s) || !isWordByte(s[end]))
		b.WriteString(s[:i])
		if alone {
			b.WriteString(Redacted)
		} else {
			b.WriteString(sec)
		}
		s = s[end:]
	}
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

var schemeRE = regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.\-]*://`)

// ScrubURLs masks the secret parts (see the rule above) of every
// scheme://... URL in s. A URL ends at white space, a quote, an angle
// bracket or a backslash; trailing punctuation is not part of it.
func ScrubURLs(s string) string {
	locs := schemeRE.FindAllStringIndex(s, -1)
	if locs == nil {
		return s
	}
	var b strings.Builder
	last := 0
	for _, loc := range locs {
		if loc[0] < last {
			continue
		}
		rest := s[loc[1]:]
		n := strings.IndexAny(rest, " \t\r\n\"'`<>\\")
		if n < 0 {
			n = len(rest)
		}
		for n > 0 && strings.IndexByte(".,;:)]}", rest[n-1]) >= 0 && !strings.HasSuffix(rest[:n], Redacted) {
			n--
		}
		b.WriteString(s[last:loc[1]])
		b.WriteString(scrubAfterScheme(rest[:n]))
		last = loc[1] + n
	}
	b.WriteString(s[last:])
	return b.String()
}

// RedactURL is the form of one configured base URL that is safe to print.
// It works on text that does not parse as a URL too: the whole of raw is
// taken as the URL, with or without a scheme.
func RedactURL(raw string) string {
	if scheme, rest, ok := strings.Cut(raw, "://"); ok {
		return scheme + "://" + scrubAfterScheme(rest)
	}
	return scrubAfterScheme(raw)
}

// URLSecrets returns the secret parts of a configured base URL, by the rule
// above, for NewRedactor: the user information and its parts, every query
// value, the fragment and every path segment that is not a plain API word.
// raw need not parse.
func URLSecrets(raw string) []string {
	p := splitURL(raw)
	var out []string
	if p.user != "" {
		out = append(out, p.user)
		name, pass, _ := strings.Cut(p.user, ":")
		out = append(out, name, pass)
	}
	for _, seg := range strings.Split(p.path, "/") {
		if !plainSegment(seg) {
			out = append(out, seg)
		}
	}
	if p.query != "" {
		for _, kv := range strings.Split(p.query, "&") {
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				v = k
			}
			out = append(out, v)
			if u, err := url.QueryUnescape(v); err == nil {
				out = append(out, u)
			}
		}
	}
	if p.fragment != "" {
		out = append(out, p.fragment)
	}
	return out
}

// urlParts is a URL cut by hand, after its scheme, so that text url.Parse
// refuses (a bad port, a stray space) is still understood.
type urlParts struct {
	user, host, path  string // path without its leading "/"
	hasPath           bool
	query, fragment   string
	hasQuery, hasFrag bool
}

func splitURL(raw string) urlParts {
	if _, rest, ok := strings.Cut(raw, "://"); ok {
		raw = rest
	}
	var p urlParts
	raw, p.fragment, p.hasFrag = strings.Cut(raw, "#")
	raw, p.query, p.hasQuery = strings.Cut(raw, "?")
	if at := strings.LastIndex(raw, "@"); at >= 0 {
		p.user, raw = raw[:at], raw[at+1:]
	}
	p.host, p.path, p.hasPath = strings.Cut(raw, "/")
	return p
}

func scrubAfterScheme(rest string) string {
	p := splitURL(rest)
	var b strings.Builder
	if p.user != "" {
		b.WriteString(Redacted + "@")
	}
	b.WriteString(p.host)
	if p.hasPath {
		segs := strings.Split(p.path, "/")
		for i, seg := range segs {
			if !plainSegment(seg) {
				segs[i] = Redacted
			}
		}
		b.WriteString("/" + strings.Join(segs, "/"))
	}
	if p.hasQuery {
		pairs := strings.Split(p.query, "&")
		for i, kv := range pairs {
			k, v, ok := strings.Cut(kv, "=")
			switch {
			case ok && v != "" && v != Redacted:
				pairs[i] = k + "=" + Redacted
			case !ok && k != "" && k != Redacted:
				pairs[i] = Redacted
			}
		}
		b.WriteString("?" + strings.Join(pairs, "&"))
	}
	if p.hasFrag {
		b.WriteString("#")
		if p.fragment != "" {
			b.WriteString(Redacted)
		}
	}
	return b.String()
}

var versionRE = regexp.MustCompile(`^v[0-9]+(\.[0-9]+)?([a-z]+[0-9]*)?$`)

// plainSegment reports whether a URL path segment is an ordinary API word
// rather than something that may be a token; see the rule above. Empty
// segments and one already masked are plain.
func plainSegment(seg string) bool {
	if seg == "" || seg == Redacted || versionRE.MatchString(seg) {
		return true
	}
	if len(seg) > 20 {
		return false
	}
	for i := 0; i < len(seg); i++ {
		c := seg[i]
		if !(c >= 'a' && c <= 'z' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}
