package chat

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Markers of Qwen-style output.
const (
	ThinkOpen     = "<think>"
	ThinkClose    = "</think>"
	ToolCallOpen  = "<tool_call>"
	ToolCallClose = "</tool_call>"
)

// Delta is what one piece of model output adds to the reply.
type Delta struct {
	Content   string
	Reasoning string
	ToolCalls []ToolCall
}

// Empty reports whether the delta carries nothing.
func (d Delta) Empty() bool { return d.Content == "" && d.Reasoning == "" && len(d.ToolCalls) == 0 }

type state int

const (
	inContent state = iota
	inThink
	inTool
)

// Parser splits streamed model output into content, reasoning (<think>…</think>) and tool
// calls (<tool_call>{"name":…,"arguments":…}</tool_call>). Text that may be the start of a
// marker is held back until it is known not to be one; whitespace around the blocks is
// dropped. A tool call whose JSON does not parse comes out as content, verbatim.
type Parser struct {
	tools bool
	st    state
	pend  string // unprocessed text
	ws    string // whitespace held back until non-space text follows
	start bool   // at the start of a section (leading whitespace is dropped)
	calls int
}

// NewParser starts a parser. inThink: the prompt already opened a think block (the model's
// first tokens are reasoning). tools: recognize tool calls (when the request offered tools).
func NewParser(thinking, tools bool) *Parser {
	p := &Parser{tools: tools, start: true}
	if thinking {
		p.st = inThink
	}
	return p
}

// Add consumes more output text.
func (p *Parser) Add(text string) Delta {
	p.pend += text
	var d Delta
	for p.pend != "" {
		var markers []string
		switch p.st {
		case inContent:
			markers = []string{ThinkOpen}
			if p.tools {
				markers = append(markers, ToolCallOpen)
			}
		case inThink:
			markers = []string{ThinkClose}
		case inTool:
			markers = []string{ToolCallClose}
		}
		at, m := -1, ""
		for _, mk := range markers {
			if i := strings.Index(p.pend, mk); i >= 0 && (at < 0 || i < at) {
				at, m = i, mk
			}
		}
		if at < 0 {
			keep := 0
			for _, mk := range markers {
				keep = max(keep, partialSuffix(p.pend, mk))
			}
			if p.st == inTool {
				keep = len(p.pend) // a call is emitted whole
			}
			p.emit(&d, p.pend[:len(p.pend)-keep])
			p.pend = p.pend[len(p.pend)-keep:]
			break
		}
		before := p.pend[:at]
		p.pend = p.pend[at+len(m):]
		switch m {
		case ThinkOpen:
			p.emit(&d, before)
			p.st, p.ws, p.start = inThink, "", true
		case ThinkClose:
			p.emit(&d, before)
			p.st, p.ws, p.start = inContent, "", true
		case ToolCallOpen:
			p.emit(&d, before)
			p.st = inTool
		case ToolCallClose:
			body := before
			if c, ok := parseCall(body, p.calls); ok {
				d.ToolCalls = append(d.ToolCalls, c)
				p.calls++
				p.st, p.ws = inContent, ""
			} else {
				p.st = inContent
				p.emit(&d, ToolCallOpen+body+ToolCallClose)
			}
		}
	}
	return d
}

// Flush ends the output: held-back text that turned out not to be a marker is emitted, an
// unterminated tool call comes out as content.
func (p *Parser) Flush() Delta {
	var d Delta
	switch p.st {
	case inTool:
		p.st = inContent
		p.emit(&d, ToolCallOpen+p.pend)
	default:
		p.emit(&d, p.pend)
	}
	p.pend = ""
	return d
}

// emit appends text to the current section, dropping leading whitespace of a section and
// holding trailing whitespace back.
func (p *Parser) emit(d *Delta, s string) {
	if s == "" {
		return
	}
	if p.start {
		s = strings.TrimLeft(s, " \t\r\n")
		if s == "" {
			return
		}
		p.start = false
	}
	trimmed := strings.TrimRight(s, " \t\r\n")
	out := s
	if trimmed == "" {
		p.ws += s
		return
	}
	out = p.ws + trimmed
	p.ws = s[len(trimmed):]
	switch p.st {
	case inThink:
		d.Reasoning += out
	default:
		d.Content += out
	}
}

// partialSuffix is the length of the longest suffix of s that is a proper prefix of m.
func partialSuffix(s, m string) int {
	for n := min(len(s), len(m)-1); n > 0; n-- {
		if strings.HasSuffix(s, m[:n]) {
			return n
		}
	}
	return 0
}

func parseCall(body string, n int) (ToolCall, bool) {
	var c struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	dec := json.NewDecoder(strings.NewReader(body))
	if err := dec.Decode(&c); err != nil || c.Name == "" {
		return ToolCall{}, false
	}
	if dec.More() {
		return ToolCall{}, false
	}
	args := "{}"
	if len(c.Arguments) > 0 {
		var b bytes.Buffer
		if err := json.Compact(&b, c.Arguments); err != nil {
			return ToolCall{}, false
		}
		args = b.String()
		// Arguments given as a JSON string holding JSON stay that string's text.
		var s string
		if json.Unmarshal(c.Arguments, &s) == nil {
			args = s
		}
	}
	return ToolCall{ID: fmt.Sprintf("call_%d", n), Name: c.Name, Arguments: args}, true
}

// Result is a whole reply, parsed.
type Result struct {
	Content   string
	Reasoning string
	ToolCalls []ToolCall
}

// Parse splits a complete output.
func Parse(text string, thinking, tools bool) Result {
	p := NewParser(thinking, tools)
	var r Result
	for _, d := range []Delta{p.Add(text), p.Flush()} {
		r.Content += d.Content
		r.Reasoning += d.Reasoning
		r.ToolCalls = append(r.ToolCalls, d.ToolCalls...)
	}
	return r
}
