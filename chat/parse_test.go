package chat

import (
	"reflect"
	"testing"
)

func TestParse(t *testing.T) {
	cases := []struct {
		name            string
		in              string
		thinking, tools bool
		want            Result
	}{
		{"plain", "Hello <b>world</b>", false, false, Result{Content: "Hello <b>world</b>"}},
		{"think", "<think>\nLet me see.\n</think>\n\nThe answer is 4.", false, false, Result{Content: "The answer is 4.", Reasoning: "Let me see."}},
		{"opened by prompt", "Reason.\n</think>\n\nDone", true, false, Result{Content: "Done", Reasoning: "Reason."}},
		{"tool", "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>", false, true,
			Result{ToolCalls: []ToolCall{{ID: "call_0", Name: "get_weather", Arguments: `{"city":"Paris"}`}}}},
		{"two tools and text", "Checking.\n<tool_call>\n{\"name\": \"a\", \"arguments\": {}}\n</tool_call>\n<tool_call>\n{\"name\": \"b\", \"arguments\": \"{\\\"x\\\":1}\"}\n</tool_call>", false, true,
			Result{Content: "Checking.", ToolCalls: []ToolCall{{ID: "call_0", Name: "a", Arguments: `{}`}, {ID: "call_1", Name: "b", Arguments: `{"x":1}`}}}},
		{"tool without tools", "<tool_call>{\"name\":\"a\"}</tool_call>", false, false, Result{Content: "<tool_call>{\"name\":\"a\"}</tool_call>"}},
		{"bad tool json", "<tool_call>{name: a}</tool_call> ok", false, true, Result{Content: "<tool_call>{name: a}</tool_call> ok"}},
		{"unterminated tool", "x <tool_call>{\"name\":", false, true, Result{Content: "x <tool_call>{\"name\":"}},
		{"partial marker at end", "a <thi", false, false, Result{Content: "a <thi"}},
		{"unterminated think", "<think>hmm", false, false, Result{Reasoning: "hmm"}},
	}
	for _, c := range cases {
		got := Parse(c.in, c.thinking, c.tools)
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: got %+v\nwant %+v", c.name, got, c.want)
		}
		// Streamed one byte at a time: the same result.
		p := NewParser(c.thinking, c.tools)
		var s Result
		add := func(d Delta) {
			s.Content += d.Content
			s.Reasoning += d.Reasoning
			s.ToolCalls = append(s.ToolCalls, d.ToolCalls...)
		}
		for i := range len(c.in) {
			add(p.Add(c.in[i : i+1]))
		}
		add(p.Flush())
		if !reflect.DeepEqual(s, c.want) {
			t.Errorf("%s streamed: got %+v\nwant %+v", c.name, s, c.want)
		}
	}
}

func TestParserHoldsMarkers(t *testing.T) {
	p := NewParser(false, true)
	if d := p.Add("Hi <tool_"); d.Content != "Hi" {
		t.Fatalf("%+v", d)
	}
	if d := p.Add("call>{\"name\":\"f\",\"arguments\":{\"a\":[1]}}</tool_call>"); len(d.ToolCalls) != 1 || d.Content != "" || d.ToolCalls[0].Arguments != `{"a":[1]}` {
		t.Fatalf("%+v", d)
	}
}
