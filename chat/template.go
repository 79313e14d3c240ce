// Package chat renders a model's chat template (tokenizer.chat_template, a Jinja2 template
// as Hugging Face writes them) into a prompt, and parses the model's output back into
// content, reasoning and tool calls.
//
// Templates are rendered with gonja (a Go Jinja2 engine) configured as Hugging Face renders
// them (trim_blocks and lstrip_blocks on), with the pieces it lacks added here: a tojson that
// keeps the request's key order and writes Python's separators (", " and ": ", as json.dumps
// does), raise_exception and strftime_now. Templates cannot read files: include, import and
// extends only see the template itself.
package chat

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/nikolalohinski/gonja/v2"
	"github.com/nikolalohinski/gonja/v2/builtins"
	"github.com/nikolalohinski/gonja/v2/exec"
	"github.com/nikolalohinski/gonja/v2/loaders"
)

// ChatML is the template used when a model carries none but its vocabulary has
// <|im_start|> and <|im_end|>.
const ChatML = "{%- for message in messages %}{{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}{%- endfor %}{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}"

// Message is one chat message, as the OpenAI API carries it (content already flattened to
// text).
type Message struct {
	Role             string
	Content          string
	ReasoningContent *string // assistant: earlier reasoning, when the client sends it back
	ToolCalls        []ToolCall
	ToolCallID       string // tool: the call this message answers
	Name             string
}

// ToolCall is a function call the model made.
type ToolCall struct {
	ID        string
	Name      string
	Arguments string // JSON text
}

// Options are the template's variables besides the messages.
type Options struct {
	// Tools are the request's tool definitions, as JSON objects ({"type":"function",...}).
	Tools               []json.RawMessage
	AddGenerationPrompt bool
	// EnableThinking, when set, is passed as enable_thinking (Qwen3: false closes the
	// think block up front).
	EnableThinking *bool
	BOS, EOS       string
}

// Template is a compiled chat template. It is safe for concurrent use.
type Template struct {
	src string
	tpl *exec.Template

	mu  sync.Mutex
	raw map[uintptr]string // JSON text (Python style) of the request's objects, by map identity
}

// New compiles a chat template.
func New(src string) (*Template, error) {
	t := &Template{src: src}
	filters := exec.NewFilterSet(map[string]exec.FilterFunction{})
	filters.Update(builtins.Filters)
	if err := filters.Replace("tojson", t.tojson); err != nil {
		return nil, err
	}
	env := &exec.Environment{
		Context: exec.EmptyContext().Update(builtins.GlobalFunctions).Update(builtins.GlobalVariables).Update(exec.NewContext(map[string]any{
			"raise_exception": func(msg string) (string, error) { return "", fmt.Errorf("chat template: %s", msg) },
			"strftime_now":    func(format string) string { return strftime(time.Now(), format) },
		})),
		Filters:           filters,
		Tests:             builtins.Tests,
		ControlStructures: builtins.ControlStructures,
		Methods:           builtins.Methods,
	}
	cfg := gonja.DefaultConfig.Inherit()
	cfg.TrimBlocks, cfg.LeftStripBlocks, cfg.AutoEscape = true, true, false
	loader, err := loaders.NewMemoryLoader(map[string]string{"/chat_template": src})
	if err != nil {
		return nil, err
	}
	tpl, err := exec.NewTemplate("/chat_template", cfg, loader, env)
	if err != nil {
		return nil, fmt.Errorf("chat template: %w", err)
	}
	t.tpl = tpl
	return t, nil
}

// Source is the template's text.
func (t *Template) Source() string { return t.src }

// Has reports whether the template mentions a variable (e.g. "tools", "enable_thinking").
func (t *Template) Has(name string) bool { return strings.Contains(t.src, name) }

// Render formats the conversation.
func (t *Template) Render(msgs []Message, o Options) (out string, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.raw = map[uintptr]string{}
	defer func() { t.raw = nil }()
	defer func() {
		// A template engine's bug must not take the server down.
		if r := recover(); r != nil {
			out, err = "", fmt.Errorf("chat template: %v", r)
		}
	}()
	ms := make([]any, len(msgs))
	for i, m := range msgs {
		d := map[string]any{"role": m.Role, "content": m.Content}
		if m.ReasoningContent != nil {
			d["reasoning_content"] = *m.ReasoningContent
		}
		if m.ToolCallID != "" {
			d["tool_call_id"] = m.ToolCallID
		}
		if m.Name != "" {
			d["name"] = m.Name
		}
		if len(m.ToolCalls) > 0 {
			var calls []any
			for _, c := range m.ToolCalls {
				fn := map[string]any{"name": c.Name, "arguments": c.Arguments}
				// Templates that write arguments | tojson expect an object.
				if v, ok := t.decode([]byte(c.Arguments)); ok {
					if _, isObj := v.(map[string]any); isObj {
						fn["arguments"] = v
					}
				}
				calls = append(calls, map[string]any{"id": c.ID, "type": "function", "function": fn})
			}
			d["tool_calls"] = calls
		}
		ms[i] = d
	}
	vars := map[string]any{
		"messages":              ms,
		"add_generation_prompt": o.AddGenerationPrompt,
		"bos_token":             o.BOS,
		"eos_token":             o.EOS,
	}
	if len(o.Tools) > 0 {
		var tools []any
		for i, raw := range o.Tools {
			v, ok := t.decode(raw)
			if !ok {
				return "", fmt.Errorf("chat: tool %d is not valid JSON", i)
			}
			tools = append(tools, v)
		}
		vars["tools"] = tools
	}
	if o.EnableThinking != nil {
		vars["enable_thinking"] = *o.EnableThinking
	}
	var b bytes.Buffer
	if err := t.tpl.Execute(&b, exec.NewContext(vars)); err != nil {
		return "", fmt.Errorf("chat template: %w", err)
	}
	return b.String(), nil
}

// decode parses JSON into maps, slices and scalars, remembering the Python-style text of
// every object and array so that tojson writes them in the request's key order.
func (t *Template) decode(raw []byte) (any, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	v, err := t.decodeValue(dec)
	if err != nil {
		return nil, false
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, false
	}
	return v, true
}

func (t *Template) decodeValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch tok := tok.(type) {
	case json.Delim:
		switch tok {
		case '{':
			m := map[string]any{}
			var sb strings.Builder
			sb.WriteByte('{')
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return nil, err
				}
				key, _ := k.(string)
				v, err := t.decodeValue(dec)
				if err != nil {
					return nil, err
				}
				if len(m) > 0 {
					sb.WriteString(", ")
				}
				sb.WriteString(quote(key))
				sb.WriteString(": ")
				sb.WriteString(t.text(v))
				m[key] = v
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			sb.WriteByte('}')
			t.raw[reflect.ValueOf(m).Pointer()] = sb.String()
			return m, nil
		case '[':
			var s []any
			for dec.More() {
				v, err := t.decodeValue(dec)
				if err != nil {
					return nil, err
				}
				s = append(s, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			if s == nil {
				s = []any{}
			}
			return s, nil
		}
		return nil, fmt.Errorf("unexpected %v", tok)
	case json.Number:
		if i, err := tok.Int64(); err == nil {
			return int(i), nil
		}
		f, err := tok.Float64()
		return f, err
	default:
		return tok, nil // string, bool, nil
	}
}

// text is v as Python's json.dumps writes it (ensure_ascii off, as Hugging Face's tojson).
func (t *Template) text(v any) string {
	switch v := v.(type) {
	case map[string]any:
		if s, ok := t.raw[reflect.ValueOf(v).Pointer()]; ok {
			return s
		}
		return pyJSON(v)
	case []any:
		parts := make([]string, len(v))
		for i, x := range v {
			parts[i] = t.text(x)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case string:
		return quote(v)
	default:
		return pyJSON(v)
	}
}

func (t *Template) tojson(e *exec.Evaluator, in *exec.Value, params *exec.VarArgs) *exec.Value {
	if in.IsError() {
		return in
	}
	if len(params.KwArgs) > 0 || len(params.Args) > 0 {
		// indent and friends: the stock filter.
		f, _ := builtins.Filters.Get("tojson")
		return f(e, in, params)
	}
	return exec.AsSafeValue(t.text(plain(in.Interface())))
}

// plain converts gonja's values back to JSON-like Go values.
func plain(v any) any {
	switch x := v.(type) {
	case *exec.Value:
		return plain(x.Interface())
	case map[string]any, []any, string, bool, nil, int, float64:
		return x
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Slice, reflect.Array:
		s := make([]any, rv.Len())
		for i := range s {
			s[i] = plain(rv.Index(i).Interface())
		}
		return s
	case reflect.Map:
		m := map[string]any{}
		for _, k := range rv.MapKeys() {
			m[fmt.Sprint(k.Interface())] = plain(rv.MapIndex(k).Interface())
		}
		return m
	}
	return v
}

// pyJSON writes v with Python's separators; objects not from the request come out with
// sorted keys.
func pyJSON(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "null"
	}
	// Re-space the compact encoding: outside strings, "," → ", " and ":" → ": ".
	src := bytes.TrimRight(b.Bytes(), "\n")
	var out strings.Builder
	inStr, esc := false, false
	for _, c := range src {
		out.WriteByte(c)
		switch {
		case inStr && esc:
			esc = false
		case inStr && c == '\\':
			esc = true
		case c == '"':
			inStr = !inStr
		case !inStr && (c == ',' || c == ':'):
			out.WriteByte(' ')
		}
	}
	return out.String()
}

func quote(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return strings.TrimRight(b.String(), "\n")
}

// strftime supports the directives chat templates use for dates.
func strftime(t time.Time, f string) string {
	layouts := map[byte]string{'Y': "2006", 'm': "01", 'd': "02", 'H': "15", 'M': "04", 'S': "05",
		'b': "Jan", 'B': "January", 'a': "Mon", 'A': "Monday", 'y': "06", 'p': "PM", 'I': "03"}
	var b strings.Builder
	for i := 0; i < len(f); i++ {
		if f[i] == '%' && i+1 < len(f) {
			i++
			if l, ok := layouts[f[i]]; ok {
				b.WriteString(t.Format(l))
				continue
			}
			if f[i] == '%' {
				b.WriteByte('%')
				continue
			}
			b.WriteByte('%')
		}
		b.WriteByte(f[i])
	}
	return b.String()
}
