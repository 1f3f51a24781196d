package hostgov

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// object is a JSON object that keeps its keys' order and its values'
// bytes, so that a settings file baton edits keeps the user's keys where
// they were and every value baton does not touch as it was.
type object struct {
	keys []string
	vals map[string]json.RawMessage
}

// parseObject reads a JSON object; anything else is an error.
func parseObject(data []byte) (*object, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errors.New("not a JSON object")
	}
	o := &object{vals: map[string]json.RawMessage{}}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, ok := tok.(string)
		if !ok {
			return nil, errors.New("an object key is not a string")
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		if _, dup := o.vals[key]; !dup {
			o.keys = append(o.keys, key)
		}
		o.vals[key] = v
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err == nil {
		return nil, errors.New("text after the JSON object")
	}
	return o, nil
}

func (o *object) get(key string) (json.RawMessage, bool) {
	v, ok := o.vals[key]
	return v, ok
}

func (o *object) set(key string, v json.RawMessage) {
	if _, ok := o.vals[key]; !ok {
		o.keys = append(o.keys, key)
	}
	o.vals[key] = v
}

func (o *object) del(key string) {
	if _, ok := o.vals[key]; !ok {
		return
	}
	delete(o.vals, key)
	for i, k := range o.keys {
		if k == key {
			o.keys = append(o.keys[:i], o.keys[i+1:]...)
			break
		}
	}
}

// marshal writes the object indented by two spaces, as the hosts write
// their settings.
func (o *object) marshal() ([]byte, error) {
	var b bytes.Buffer
	if len(o.keys) == 0 {
		return []byte("{}"), nil
	}
	b.WriteString("{\n")
	for i, k := range o.keys {
		kb, _ := json.Marshal(k)
		b.WriteString("  ")
		b.Write(kb)
		b.WriteString(": ")
		if err := json.Indent(&b, o.vals[k], "  ", "  "); err != nil {
			return nil, fmt.Errorf("value of %q: %w", k, err)
		}
		if i < len(o.keys)-1 {
			b.WriteString(",")
		}
		b.WriteString("\n")
	}
	b.WriteString("}")
	return b.Bytes(), nil
}

// rawArray splits a JSON array into its elements' bytes.
func rawArray(v json.RawMessage) ([]json.RawMessage, error) {
	if len(bytes.TrimSpace(v)) == 0 || strings.TrimSpace(string(v)) == "null" {
		return nil, nil
	}
	var a []json.RawMessage
	if err := json.Unmarshal(v, &a); err != nil {
		return nil, errors.New("not a JSON array")
	}
	return a, nil
}

func joinArray(a []json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('[')
	for i, v := range a {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(v)
	}
	b.WriteByte(']')
	return b.Bytes()
}
