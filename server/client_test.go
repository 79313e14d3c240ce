package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"
)

func client(url string) openai.Client {
	return openai.NewClient(option.WithBaseURL(url+"/v1/"), option.WithAPIKey("none"), option.WithMaxRetries(0))
}

// The official Go client against the qwen3moe fixture (Qwen3's chat template): a
// completion, the same one streamed (same text), logprobs, usage and cached tokens.
func TestOpenAIGoChat(t *testing.T) {
	s, url := start(t, chatPath(t), Config{})
	c := client(url)
	ctx := context.Background()
	params := openai.ChatCompletionNewParams{
		Model: s.ModelID(),
		Messages: []openai.ChatCompletionMessageParamUnion{
			openai.SystemMessage("You are a helpful assistant."),
			openai.UserMessage("What is a mixture of experts?"),
		},
		MaxTokens: openai.Int(12), Temperature: openai.Float(0), Logprobs: openai.Bool(true), TopLogprobs: openai.Int(3),
	}
	r1, err := c.Chat.Completions.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if len(r1.Choices) != 1 || r1.Usage.CompletionTokens == 0 || r1.Usage.PromptTokens < 20 {
		t.Fatalf("response %+v", r1)
	}
	ch := r1.Choices[0]
	if ch.Message.Role != "assistant" || (ch.FinishReason != "length" && ch.FinishReason != "stop") {
		t.Fatalf("choice %+v", ch)
	}
	if int64(len(ch.Logprobs.Content)) != r1.Usage.CompletionTokens {
		t.Fatalf("%d logprobs for %d tokens", len(ch.Logprobs.Content), r1.Usage.CompletionTokens)
	}
	for _, lp := range ch.Logprobs.Content {
		if len(lp.TopLogprobs) != 3 || lp.Logprob > 0 || lp.TopLogprobs[0].Logprob < lp.Logprob {
			t.Fatalf("logprob entry %+v", lp)
		}
	}
	// Same request streamed: same text; the prompt is reused from RAM.
	stream := c.Chat.Completions.NewStreaming(ctx, params, option.WithJSONSet("stream_options", map[string]any{"include_usage": true}))
	acc := openai.ChatCompletionAccumulator{}
	chunks := 0
	for stream.Next() {
		acc.AddChunk(stream.Current())
		chunks++
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if got, want := acc.Choices[0].Message.Content, ch.Message.Content; got != want {
		t.Fatalf("streamed %q, not %q", got, want)
	}
	if chunks < 3 || acc.Usage.PromptTokensDetails.CachedTokens == 0 || acc.Usage.PromptTokens != r1.Usage.PromptTokens {
		t.Fatalf("%d chunks, usage %+v", chunks, acc.Usage)
	}
	// Models.
	m, err := c.Models.List(ctx)
	if err != nil || len(m.Data) != 1 || m.Data[0].ID != s.ModelID() {
		t.Fatalf("models %+v %v", m, err)
	}
}

// Tools reach the template, and tool calls in the model's output come back as tool_calls
// (non-streamed and streamed): the model's output is scripted here, the rest is real.
func TestOpenAIGoTools(t *testing.T) {
	s, url := start(t, chatPath(t), Config{})
	var mu sync.Mutex
	var prompts []string
	out := "<think>\nThe user wants weather.\n</think>\n\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>"
	s.genFn = func(ctx context.Context, g *genRequest) (*genResult, error) {
		mu.Lock()
		prompts = append(prompts, s.e.Tok.Decode(g.prompt))
		mu.Unlock()
		for i := 0; i < len(out); i += 7 {
			if g.onText != nil && !g.onText(out[i:min(i+7, len(out))], nil) {
				return &genResult{finish: "cancelled"}, nil
			}
		}
		return &genResult{text: out, ids: make([]int32, 20), finish: "stop", promptTokens: len(g.prompt)}, nil
	}
	c := client(url)
	params := openai.ChatCompletionNewParams{
		Model:    s.ModelID(),
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Weather in Paris?")},
		Tools: []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name: "get_weather", Description: openai.String("Current weather"),
			Parameters: shared.FunctionParameters{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}},
		})},
	}
	r, err := c.Chat.Completions.New(context.Background(), params)
	if err != nil {
		t.Fatal(err)
	}
	msg := r.Choices[0].Message
	if r.Choices[0].FinishReason != "tool_calls" || len(msg.ToolCalls) != 1 || msg.ToolCalls[0].Function.Name != "get_weather" ||
		msg.ToolCalls[0].Function.Arguments != `{"city":"Paris"}` || msg.Content != "" {
		t.Fatalf("message %+v finish %s", msg, r.Choices[0].FinishReason)
	}
	var raw map[string]any
	json.Unmarshal([]byte(msg.RawJSON()), &raw)
	if raw["reasoning_content"] != "The user wants weather." {
		t.Fatalf("reasoning_content %v", raw["reasoning_content"])
	}
	if !strings.Contains(prompts[0], `"name": "get_weather"`) || !strings.Contains(prompts[0], "<tools>") {
		t.Fatalf("tools missing from the prompt:\n%s", prompts[0])
	}
	stream := c.Chat.Completions.NewStreaming(context.Background(), params)
	acc := openai.ChatCompletionAccumulator{}
	for stream.Next() {
		acc.AddChunk(stream.Current())
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if tc := acc.Choices[0].Message.ToolCalls; len(tc) != 1 || tc[0].Function.Arguments != `{"city":"Paris"}` || acc.Choices[0].FinishReason != "tool_calls" {
		t.Fatalf("streamed tool calls %+v", acc.Choices[0])
	}
	// The tool result goes back in the next turn.
	asst := msg.ToParam()
	params.Messages = append(params.Messages, asst, openai.ToolMessage("18C", msg.ToolCalls[0].ID))
	if _, err := c.Chat.Completions.New(context.Background(), params); err != nil {
		t.Fatal(err)
	}
	last := prompts[len(prompts)-1]
	if !strings.Contains(last, "<tool_response>\n18C\n</tool_response>") || !strings.Contains(last, `{"name": "get_weather", "arguments": {"city": "Paris"}}`) {
		t.Fatalf("tool turn not rendered:\n%s", last)
	}
}

func post(t *testing.T, url, path, body string) (int, map[string]any) {
	t.Helper()
	resp, err := http.Post(url+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var m map[string]any
	json.Unmarshal(b, &m)
	return resp.StatusCode, m
}

// Bad requests: 400 with an OpenAI error body naming the problem, seen by the Go client
// as *openai.Error.
func TestErrors(t *testing.T) {
	s, url := start(t, chatPath(t), Config{})
	long := strings.Repeat("hello world ", 1200)
	cases := []struct{ body, want string }{
		{`{"messages": [`, "malformed JSON"},
		{`{"messages": [{"role":"user","content":"hi"}], "max_tokens": "ten"}`, "max_tokens"},
		{`{"messages": [{"role":"user","content":"hi"}], "temperature": 7}`, "temperature"},
		{`{"messages": [{"role":"user","content":"hi"}], "model": "gpt-9"}`, "does not exist"},
		{`{"messages": []}`, "messages must not be empty"},
		{`{"messages": [{"role":"wizard","content":"hi"}]}`, "unknown role"},
		{`{"messages": [{"role":"user","content":"hi"}], "top_logprobs": 3}`, "requires logprobs"},
		{`{"messages": [{"role":"user","content":"hi"}], "stop": 5}`, "stop"},
		{`{"messages": [{"role":"user","content":"hi"}], "tools": [{"type":"function"}]}`, "tools[0]"},
		{`{"messages": [{"role":"user","content":"hi"}], "n": 2}`, "n must be 1"},
		{`{"messages": [{"role":"user","content":"` + long + `"}]}`, "more than the context"},
		{`[1,2]`, "expected"},
	}
	for _, c := range cases {
		code, m := post(t, url, "/v1/chat/completions", c.body)
		e, _ := m["error"].(map[string]any)
		msg, _ := e["message"].(string)
		if code != 400 || !strings.Contains(msg, c.want) || e["type"] != "invalid_request_error" {
			t.Errorf("%.60s: %d %v (want 400 mentioning %q)", c.body, code, m, c.want)
		}
	}
	for _, c := range []struct{ body, want string }{
		{`{"prompt": 7}`, "prompt must be"},
		{`{"prompt": [99999999]}`, "outside the vocabulary"},
		{`{"prompt": "x", "max_tokens": 0}`, "at least 1"},
	} {
		code, m := post(t, url, "/v1/completions", c.body)
		if e, _ := m["error"].(map[string]any); code != 400 || !strings.Contains(fmt.Sprint(e["message"]), c.want) {
			t.Errorf("%s: %d %v", c.body, code, m)
		}
	}
	c := client(url)
	_, err := c.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{
		Model: "no-such-model", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}})
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || !strings.Contains(apiErr.Message, "does not exist") {
		t.Fatalf("go client error %v", err)
	}
	if code, _ := post(t, url, "/slots/0?action=save", `{"filename":"../../etc/x"}`); code != 400 {
		t.Errorf("escaping slot name: %d", code)
	}
	_ = s
}

// One generation at a time with no waiting room: a second request gets 429; a client
// that disconnects cancels its generation.
func TestQueueAndCancel(t *testing.T) {
	s, url := start(t, defaultPath(t), Config{MaxQueue: -1})
	started := make(chan struct{})
	finished := make(chan string, 4)
	orig := s.genFn
	s.genFn = func(ctx context.Context, g *genRequest) (*genResult, error) {
		close(started)
		r, err := orig(ctx, g)
		if r != nil {
			finished <- r.finish
		}
		return r, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		req, _ := http.NewRequestWithContext(ctx, "POST", url+"/v1/completions", strings.NewReader(`{"prompt":"func main() {","max_tokens":100000,"temperature":0.8,"stop":"\u0000"}`))
		_, err := http.DefaultClient.Do(req)
		done <- err
	}()
	<-started
	code, m := post(t, url, "/v1/completions", `{"prompt":"x"}`)
	if code != 429 {
		t.Fatalf("second request: %d %v", code, m)
	}
	cancel()
	<-done
	select {
	case f := <-finished:
		if f != "cancelled" {
			t.Fatalf("generation ended %q, not cancelled", f)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the generation did not stop after the client left")
	}
}
