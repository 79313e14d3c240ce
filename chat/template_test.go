package chat

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/regolith/regolith/gguf"
	"github.com/regolith/regolith/internal/fixtures"
)

func fixtureTemplate(t *testing.T) *Template {
	t.Helper()
	f, err := gguf.Open(fixtures.Path(t, "models", "qwen3moe-small-q8_0.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	src, ok := f.String("tokenizer.chat_template")
	if !ok {
		t.Fatal("fixture has no chat template")
	}
	tp, err := New(src)
	if err != nil {
		t.Fatal(err)
	}
	return tp
}

func TestQwen3Plain(t *testing.T) {
	tp := fixtureTemplate(t)
	msgs := []Message{{Role: "system", Content: "You are a helpful assistant."}, {Role: "user", Content: "What is a mixture of experts?"}}
	got, err := tp.Render(msgs, Options{AddGenerationPrompt: true})
	if err != nil {
		t.Fatal(err)
	}
	want := "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\nWhat is a mixture of experts?<|im_end|>\n<|im_start|>assistant\n"
	if got != want {
		t.Fatalf("got %q\nwant %q", got, want)
	}
	no := false
	got, err = tp.Render(msgs[1:], Options{AddGenerationPrompt: true, EnableThinking: &no})
	if err != nil {
		t.Fatal(err)
	}
	want = "<|im_start|>user\nWhat is a mixture of experts?<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n"
	if got != want {
		t.Fatalf("enable_thinking=false: got %q\nwant %q", got, want)
	}
	got, err = tp.Render(msgs[1:], Options{})
	if err != nil {
		t.Fatal(err)
	}
	if want := "<|im_start|>user\nWhat is a mixture of experts?<|im_end|>\n"; got != want {
		t.Fatalf("no generation prompt: got %q want %q", got, want)
	}
}

// The fixture's template with tools, an assistant turn with reasoning and two tool calls,
// two tool results and a final assistant answer: the text Qwen3's template (rendered by
// Jinja2 with trim_blocks/lstrip_blocks) produces, written out by hand.
func TestQwen3Tools(t *testing.T) {
	tp := fixtureTemplate(t)
	tools := []json.RawMessage{json.RawMessage(`{"type":"function","function":{"name":"get_weather","description":"Weather in a city","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}`)}
	msgs := []Message{
		{Role: "system", Content: "Be brief."},
		{Role: "user", Content: "Weather in Paris and Oslo?"},
		{Role: "assistant", Content: "<think>\nTwo cities.\n</think>\n\n", ToolCalls: []ToolCall{
			{ID: "a", Name: "get_weather", Arguments: `{"city": "Paris"}`},
			{ID: "b", Name: "get_weather", Arguments: `{"city":"Oslo"}`}}},
		{Role: "tool", Content: "18C", ToolCallID: "a"},
		{Role: "tool", Content: "3C", ToolCallID: "b"},
		{Role: "assistant", Content: "Paris 18C, Oslo 3C."},
		{Role: "user", Content: "Thanks"},
	}
	got, err := tp.Render(msgs, Options{Tools: tools, AddGenerationPrompt: true})
	if err != nil {
		t.Fatal(err)
	}
	want := "<|im_start|>system\nBe brief.\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\n" +
		"You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n" +
		`{"type": "function", "function": {"name": "get_weather", "description": "Weather in a city", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}` +
		"\n</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": <function-name>, \"arguments\": <args-json-object>}\n</tool_call><|im_end|>\n" +
		"<|im_start|>user\nWeather in Paris and Oslo?<|im_end|>\n" +
		// before the last user query: reasoning dropped
		"<|im_start|>assistant\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>\n" +
		"<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}\n</tool_call><|im_end|>\n" +
		"<|im_start|>user\n<tool_response>\n18C\n</tool_response>\n<tool_response>\n3C\n</tool_response><|im_end|>\n" +
		"<|im_start|>assistant\nParis 18C, Oslo 3C.<|im_end|>\n" +
		"<|im_start|>user\nThanks<|im_end|>\n<|im_start|>assistant\n"
	if got != want {
		t.Fatalf("got:\n%s\nwant:\n%s\ndiff at %d", got, want, firstDiff(got, want))
	}

	// After the last user query, the final assistant turn keeps its reasoning.
	r := "Think."
	got, err = tp.Render([]Message{{Role: "user", Content: "Hi"}, {Role: "assistant", Content: "Hello!", ReasoningContent: &r}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if want := "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\nThink.\n</think>\n\nHello!<|im_end|>\n"; got != want {
		t.Fatalf("got %q\nwant %q", got, want)
	}
}

func TestChatMLAndErrors(t *testing.T) {
	tp, err := New(ChatML)
	if err != nil {
		t.Fatal(err)
	}
	got, err := tp.Render([]Message{{Role: "user", Content: "x"}}, Options{AddGenerationPrompt: true})
	if err != nil || got != "<|im_start|>user\nx<|im_end|>\n<|im_start|>assistant\n" {
		t.Fatalf("%q %v", got, err)
	}
	if _, err := New("{% for %}"); err == nil {
		t.Fatal("a broken template compiled")
	}
	tp, err = New("{{ raise_exception('no system role') }}")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tp.Render(nil, Options{}); err == nil || !strings.Contains(err.Error(), "no system role") {
		t.Fatalf("raise_exception: %v", err)
	}
	tp, err = New(`{% include "/etc/passwd" %}`)
	if err == nil {
		if out, err := tp.Render(nil, Options{}); err == nil {
			t.Fatalf("include read a file: %q", out)
		}
	}
	if _, err := tojsonTemplate().Render(nil, Options{Tools: []json.RawMessage{json.RawMessage("{")}}); err == nil {
		t.Fatal("bad tool JSON accepted")
	}
}

func tojsonTemplate() *Template {
	tp, _ := New("{{ tools | tojson }}")
	return tp
}

func TestToJSONOrder(t *testing.T) {
	tp, err := New("{{ tools[0] | tojson }}|{{ tools[0].b | tojson }}|{{ tools | tojson }}")
	if err != nil {
		t.Fatal(err)
	}
	got, err := tp.Render(nil, Options{Tools: []json.RawMessage{json.RawMessage(`{"z":1,"b":{"y":[1,2.5,"é<"],"a":null},"a":true}`)}})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"z": 1, "b": {"y": [1, 2.5, "é<"], "a": null}, "a": true}|{"y": [1, 2.5, "é<"], "a": null}|[{"z": 1, "b": {"y": [1, 2.5, "é<"], "a": null}, "a": true}]`
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

func firstDiff(a, b string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
