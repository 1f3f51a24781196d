package bench

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// parsePyDicts reads a Python literal list of dicts of strings, as
// repr() writes it: [{'Q': '...', 'S': "..."}, ...]. Strings are quoted
// with ' or " and may hold backslash escapes (\n, \t, \\, \', \", \xNN,
// \uNNNN, \UNNNNNNNN). Anything else is an error.
func parsePyDicts(s string) ([]map[string]string, error) {
	p := &pyParser{s: s}
	var out []map[string]string
	if !p.eat('[') {
		return nil, p.errf("want '['")
	}
	for {
		if p.eat(']') {
			return out, p.end()
		}
		if len(out) > 0 && !p.eat(',') {
			return nil, p.errf("want ',' or ']'")
		}
		if p.eat(']') { // a trailing comma
			return out, p.end()
		}
		m, err := p.dict()
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
}

type pyParser struct {
	s string
	i int
}

func (p *pyParser) errf(format string, a ...any) error {
	return fmt.Errorf("python literal at byte %d: %s", p.i, fmt.Sprintf(format, a...))
}

func (p *pyParser) space() {
	for p.i < len(p.s) && strings.IndexByte(" \t\r\n", p.s[p.i]) >= 0 {
		p.i++
	}
}

func (p *pyParser) eat(c byte) bool {
	p.space()
	if p.i < len(p.s) && p.s[p.i] == c {
		p.i++
		return true
	}
	return false
}

func (p *pyParser) end() error {
	p.space()
	if p.i != len(p.s) {
		return p.errf("text after the list")
	}
	return nil
}

func (p *pyParser) dict() (map[string]string, error) {
	if !p.eat('{') {
		return nil, p.errf("want '{'")
	}
	m := map[string]string{}
	for {
		if p.eat('}') {
			return m, nil
		}
		if len(m) > 0 && !p.eat(',') {
			return nil, p.errf("want ',' or '}'")
		}
		if p.eat('}') {
			return m, nil
		}
		k, err := p.str()
		if err != nil {
			return nil, err
		}
		if !p.eat(':') {
			return nil, p.errf("want ':'")
		}
		v, err := p.str()
		if err != nil {
			return nil, err
		}
		m[k] = v
	}
}

func (p *pyParser) str() (string, error) {
	p.space()
	if p.i >= len(p.s) || (p.s[p.i] != '\'' && p.s[p.i] != '"') {
		return "", p.errf("want a quoted string")
	}
	q := p.s[p.i]
	p.i++
	var b strings.Builder
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == q:
			p.i++
			return b.String(), nil
		case c != '\\':
			b.WriteByte(c)
			p.i++
			continue
		}
		if p.i+1 >= len(p.s) {
			break
		}
		e := p.s[p.i+1]
		p.i += 2
		switch e {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case '\\', '\'', '"':
			b.WriteByte(e)
		case 'x', 'u', 'U':
			n := map[byte]int{'x': 2, 'u': 4, 'U': 8}[e]
			if p.i+n > len(p.s) {
				return "", p.errf("short \\%c escape", e)
			}
			v, err := strconv.ParseUint(p.s[p.i:p.i+n], 16, 32)
			if err != nil || !utf8.ValidRune(rune(v)) {
				return "", p.errf("bad \\%c escape", e)
			}
			b.WriteRune(rune(v))
			p.i += n
		default:
			b.WriteByte('\\')
			b.WriteByte(e)
		}
	}
	return "", errors.New("python literal: a string is not closed")
}
