package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/regolith/regolith/chat"
	"github.com/regolith/regolith/sample"
)

// maxBody bounds a request body.
const maxBody = 32 << 20

// apiError is an OpenAI-style error body.
type apiError struct {
	Error struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
		Code    *string `json:"code"`
	} `json:"error"`
}

func writeError(w http.ResponseWriter, status int, typ, param, msg string) {
	var e apiError
	e.Error.Message, e.Error.Type = msg, typ
	if param != "" {
		e.Error.Param = &param
	}
	code := map[int]string{400: "invalid_request_error", 404: "not_found", 429: "rate_limit_exceeded", 503: "unavailable", 500: "server_error"}[status]
	if code != "" {
		e.Error.Code = &code
	}
	writeJSON(w, status, e)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// badRequest is a 400 with the parameter it is about.
type badRequest struct{ param, msg string }

func (e *badRequest) Error() string { return e.msg }

func bad(param, format string, a ...any) error {
	return &badRequest{param, fmt.Sprintf(format, a...)}
}

// decodeBody parses a JSON body into v, turning syntax and type errors into 400s that name
// the field.
func decodeBody(r *http.Request, v any) error {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		return bad("", "reading the request body: %v", err)
	}
	if len(body) > maxBody {
		return bad("", "the request body exceeds %d bytes", maxBody)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		var se *json.SyntaxError
		switch {
		case errors.As(err, &te):
			return bad(te.Field, "%s: expected %s, got a JSON %s", orBody(te.Field), te.Type, te.Value)
		case errors.As(err, &se):
			return bad("", "malformed JSON at byte %d: %v", se.Offset, err)
		case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
			return bad("", "malformed JSON: the body is empty or truncated")
		default:
			return bad("", "malformed request: %v", err)
		}
	}
	if dec.More() {
		return bad("", "malformed JSON: data after the object")
	}
	return nil
}

func orBody(f string) string {
	if f == "" {
		return "the body"
	}
	return f
}

// samplingFields are the parameters chat and completions share.
type samplingFields struct {
	Model            string          `json:"model"`
	MaxTokens        *int            `json:"max_tokens"`
	Temperature      *float64        `json:"temperature"`
	TopP             *float64        `json:"top_p"`
	TopK             *int            `json:"top_k"`
	MinP             *float64        `json:"min_p"`
	Seed             *int64          `json:"seed"`
	Stop             json.RawMessage `json:"stop"`
	FrequencyPenalty *float64        `json:"frequency_penalty"`
	PresencePenalty  *float64        `json:"presence_penalty"`
	RepeatPenalty    *float64        `json:"repeat_penalty"`
	N                *int            `json:"n"`
	Stream           bool            `json:"stream"`
	StreamOptions    *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
}

func (s *Server) checkModel(m string) error {
	if m == "" || m == s.modelID || m == s.modelID+".gguf" {
		return nil
	}
	return bad("model", "the model %q does not exist; this server serves %q", m, s.modelID)
}

// sampling validates the shared fields into sampler parameters and stop strings.
func (s *Server) sampling(f *samplingFields, maxTokens *int, defMax int) (sample.Params, []string, int, error) {
	p := sample.DefaultParams()
	if err := s.checkModel(f.Model); err != nil {
		return p, nil, 0, err
	}
	if f.N != nil && *f.N != 1 {
		return p, nil, 0, bad("n", "n must be 1 (one choice per request)")
	}
	n := defMax
	if maxTokens == nil {
		maxTokens = f.MaxTokens
	}
	if maxTokens != nil {
		if *maxTokens < 1 {
			return p, nil, 0, bad("max_tokens", "max_tokens must be at least 1, got %d", *maxTokens)
		}
		n = *maxTokens
	}
	if t := f.Temperature; t != nil {
		if !(*t >= 0 && *t <= 2) {
			return p, nil, 0, bad("temperature", "temperature must be between 0 and 2, got %v", *t)
		}
		p.Temp = float32(*t)
	}
	if t := f.TopP; t != nil {
		if !(*t > 0 && *t <= 1) {
			return p, nil, 0, bad("top_p", "top_p must be in (0, 1], got %v", *t)
		}
		p.TopP = float32(*t)
	}
	if t := f.TopK; t != nil {
		if *t < 0 {
			return p, nil, 0, bad("top_k", "top_k must not be negative, got %d", *t)
		}
		p.TopK = *t
	}
	if t := f.MinP; t != nil {
		if !(*t >= 0 && *t <= 1) {
			return p, nil, 0, bad("min_p", "min_p must be between 0 and 1, got %v", *t)
		}
		p.MinP = float32(*t)
	}
	for _, x := range []struct {
		name string
		v    *float64
		dst  *float32
	}{{"frequency_penalty", f.FrequencyPenalty, &p.FrequencyPenalty}, {"presence_penalty", f.PresencePenalty, &p.PresencePenalty}} {
		if x.v != nil {
			if !(*x.v >= -2 && *x.v <= 2) {
				return p, nil, 0, bad(x.name, "%s must be between -2 and 2, got %v", x.name, *x.v)
			}
			*x.dst = float32(*x.v)
		}
	}
	if f.RepeatPenalty != nil {
		if !(*f.RepeatPenalty > 0 && !math.IsInf(*f.RepeatPenalty, 0)) {
			return p, nil, 0, bad("repeat_penalty", "repeat_penalty must be positive")
		}
		p.RepeatPenalty = float32(*f.RepeatPenalty)
	}
	if f.Seed != nil {
		if *f.Seed < 0 {
			p.Seed = sample.SeedRandom
		} else {
			p.Seed = uint64(*f.Seed)
		}
	}
	var stop []string
	if len(f.Stop) > 0 && string(f.Stop) != "null" {
		var one string
		if json.Unmarshal(f.Stop, &one) == nil {
			stop = []string{one}
		} else if err := json.Unmarshal(f.Stop, &stop); err != nil {
			return p, nil, 0, bad("stop", "stop must be a string or an array of strings")
		}
		if len(stop) > 16 {
			return p, nil, 0, bad("stop", "at most 16 stop sequences")
		}
		for _, st := range stop {
			if st == "" {
				return p, nil, 0, bad("stop", "stop sequences must not be empty")
			}
		}
	}
	return p, stop, n, nil
}

// chatRequest is the body of POST /v1/chat/completions.
type chatRequest struct {
	samplingFields
	Messages            []chatMessage     `json:"messages"`
	MaxCompletionTokens *int              `json:"max_completion_tokens"`
	Logprobs            bool              `json:"logprobs"`
	TopLogprobs         *int              `json:"top_logprobs"`
	Tools               []json.RawMessage `json:"tools"`
	ToolChoice          json.RawMessage   `json:"tool_choice"`
	ParallelToolCalls   *bool             `json:"parallel_tool_calls"`
	// EnableThinking and ChatTemplateKwargs (llama.cpp's shape) set enable_thinking.
	EnableThinking     *bool          `json:"enable_thinking"`
	ChatTemplateKwargs map[string]any `json:"chat_template_kwargs"`
	ResponseFormat     *struct {
		Type string `json:"type"`
	} `json:"response_format"`
}

type chatMessage struct {
	Role             string          `json:"role"`
	Content          json.RawMessage `json:"content"`
	ReasoningContent *string         `json:"reasoning_content"`
	Name             string          `json:"name"`
	ToolCallID       string          `json:"tool_call_id"`
	ToolCalls        []struct {
		ID       string `json:"id"`
		Type     string `json:"type"`
		Function struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls"`
}

// contentText flattens a message's content: a string, null, or an array of text parts.
func contentText(raw json.RawMessage, i int) (string, error) {
	param := fmt.Sprintf("messages[%d].content", i)
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var parts []struct {
		Type string  `json:"type"`
		Text *string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", bad(param, "%s must be a string or an array of content parts", param)
	}
	var b strings.Builder
	for j, p := range parts {
		if p.Type != "text" || p.Text == nil {
			return "", bad(param, "%s[%d]: only text parts are supported (got type %q)", param, j, p.Type)
		}
		b.WriteString(*p.Text)
	}
	return b.String(), nil
}

// prepareChat validates a chat request and renders its prompt.
func (s *Server) prepareChat(req *chatRequest) (*genRequest, chat.Options, bool, error) {
	var o chat.Options
	mt := req.MaxCompletionTokens
	if mt != nil {
		if req.MaxTokens != nil && *req.MaxTokens != *mt {
			return nil, o, false, bad("max_completion_tokens", "max_tokens and max_completion_tokens disagree")
		}
	}
	p, stop, n, err := s.sampling(&req.samplingFields, mt, -1)
	if err != nil {
		return nil, o, false, err
	}
	if s.tmpl == nil {
		return nil, o, false, bad("messages", "the model has no chat template; use /v1/completions")
	}
	if len(req.Messages) == 0 {
		return nil, o, false, bad("messages", "messages must not be empty")
	}
	top := 0
	if req.TopLogprobs != nil {
		if *req.TopLogprobs < 0 || *req.TopLogprobs > 20 {
			return nil, o, false, bad("top_logprobs", "top_logprobs must be between 0 and 20, got %d", *req.TopLogprobs)
		}
		if !req.Logprobs {
			return nil, o, false, bad("top_logprobs", "top_logprobs requires logprobs: true")
		}
		top = *req.TopLogprobs
	}
	if req.ResponseFormat != nil && req.ResponseFormat.Type != "" && req.ResponseFormat.Type != "text" {
		return nil, o, false, bad("response_format", "response_format %q is not supported (no grammar constraints)", req.ResponseFormat.Type)
	}
	var msgs []chat.Message
	for i, m := range req.Messages {
		role := m.Role
		switch role {
		case "developer":
			role = "system"
		case "system", "user", "assistant", "tool":
		default:
			return nil, o, false, bad(fmt.Sprintf("messages[%d].role", i), "messages[%d]: unknown role %q", i, m.Role)
		}
		text, err := contentText(m.Content, i)
		if err != nil {
			return nil, o, false, err
		}
		cm := chat.Message{Role: role, Content: text, ReasoningContent: m.ReasoningContent, Name: m.Name, ToolCallID: m.ToolCallID}
		for j, c := range m.ToolCalls {
			if c.Function.Name == "" {
				return nil, o, false, bad(fmt.Sprintf("messages[%d].tool_calls[%d].function.name", i, j), "a tool call needs a function name")
			}
			args := string(c.Function.Arguments)
			var sarg string
			if json.Unmarshal(c.Function.Arguments, &sarg) == nil {
				args = sarg
			}
			cm.ToolCalls = append(cm.ToolCalls, chat.ToolCall{ID: c.ID, Name: c.Function.Name, Arguments: args})
		}
		msgs = append(msgs, cm)
	}
	choice := "auto"
	if len(req.ToolChoice) > 0 && string(req.ToolChoice) != "null" {
		var sc string
		var oc struct {
			Type     string `json:"type"`
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		}
		switch {
		case json.Unmarshal(req.ToolChoice, &sc) == nil:
			if sc != "none" && sc != "auto" && sc != "required" {
				return nil, o, false, bad("tool_choice", "tool_choice must be none, auto, required or a function")
			}
			choice = sc
		case json.Unmarshal(req.ToolChoice, &oc) == nil && oc.Type == "function" && oc.Function.Name != "":
			choice = "function"
		default:
			return nil, o, false, bad("tool_choice", "tool_choice must be none, auto, required or {\"type\":\"function\",\"function\":{\"name\":...}}")
		}
	}
	for i, t := range req.Tools {
		var tool struct {
			Type     string `json:"type"`
			Function *struct {
				Name string `json:"name"`
			} `json:"function"`
		}
		if err := json.Unmarshal(t, &tool); err != nil || tool.Type != "function" || tool.Function == nil || tool.Function.Name == "" {
			return nil, o, false, bad(fmt.Sprintf("tools[%d]", i), "tools[%d] must be {\"type\":\"function\",\"function\":{\"name\":...}}", i)
		}
	}
	if choice != "none" {
		o.Tools = req.Tools
	}
	o.AddGenerationPrompt = true
	o.EnableThinking = req.EnableThinking
	if v, ok := req.ChatTemplateKwargs["enable_thinking"].(bool); ok {
		o.EnableThinking = &v
	}
	o.BOS = s.e.Tok.Piece(s.e.Tok.BOS())
	o.EOS = s.e.Tok.Piece(s.e.Tok.EOS())
	text, err := s.tmpl.Render(msgs, o)
	if err != nil {
		return nil, o, false, bad("messages", "%v", err)
	}
	prompt := s.e.Tok.Encode(text, true, true)
	if err := s.checkPrompt(prompt); err != nil {
		return nil, o, false, err
	}
	thinking := strings.HasSuffix(strings.TrimRight(text, "\n"), chat.ThinkOpen)
	return &genRequest{prompt: prompt, maxTokens: n, params: p, stop: stop, logprobs: req.Logprobs, topLogprobs: top}, o, thinking, nil
}

func (s *Server) checkPrompt(prompt []int32) error {
	if len(prompt) == 0 {
		return bad("prompt", "the prompt is empty")
	}
	if len(prompt) >= s.sess.Ctx() {
		return bad("messages", "the prompt has %d tokens, more than the context of %d allows (%d tokens at most)", len(prompt), s.sess.Ctx(), s.sess.Ctx()-1)
	}
	return nil
}

// Response shapes.

type usage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	TotalTokens         int `json:"total_tokens"`
	PromptTokensDetails struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
}

type toolCallOut struct {
	Index    *int   `json:"index,omitempty"`
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type messageOut struct {
	Role             string        `json:"role,omitempty"`
	Content          *string       `json:"content,omitempty"`
	ReasoningContent string        `json:"reasoning_content,omitempty"`
	ToolCalls        []toolCallOut `json:"tool_calls,omitempty"`
}

type logprobEntry struct {
	Token       string         `json:"token"`
	Logprob     float64        `json:"logprob"`
	Bytes       []int          `json:"bytes"`
	TopLogprobs []logprobEntry `json:"top_logprobs"`
}

type choiceLogprobs struct {
	Content []logprobEntry `json:"content"`
}

type chatChoice struct {
	Index        int             `json:"index"`
	Message      *messageOut     `json:"message,omitempty"`
	Delta        *messageOut     `json:"delta,omitempty"`
	Logprobs     *choiceLogprobs `json:"logprobs"`
	FinishReason *string         `json:"finish_reason"`
}

type chatResponse struct {
	ID                string       `json:"id"`
	Object            string       `json:"object"`
	Created           int64        `json:"created"`
	Model             string       `json:"model"`
	SystemFingerprint string       `json:"system_fingerprint"`
	Choices           []chatChoice `json:"choices"`
	Usage             *usage       `json:"usage,omitempty"`
	Timings           *timings     `json:"timings,omitempty"`
}

// timings are llama.cpp's extra response field (milliseconds).
type timings struct {
	CacheN          int     `json:"cache_n"`
	CacheSource     string  `json:"cache_source,omitempty"`
	PromptN         int     `json:"prompt_n"`
	PromptMS        float64 `json:"prompt_ms"`
	PredictedN      int     `json:"predicted_n"`
	PredictedMS     float64 `json:"predicted_ms"`
	PredictedPerSec float64 `json:"predicted_per_second"`
	TTFTMS          float64 `json:"ttft_ms"`
}

func (s *Server) lpEntries(lps []tokenLogprob) []logprobEntry {
	out := make([]logprobEntry, 0, len(lps))
	for _, t := range lps {
		e := logprobEntry{Token: t.Token, Logprob: float64(t.Logprob), Bytes: byteInts(t.Token), TopLogprobs: []logprobEntry{}}
		for _, c := range t.Top {
			p := s.e.Tok.Piece(c.ID)
			e.TopLogprobs = append(e.TopLogprobs, logprobEntry{Token: p, Logprob: float64(c.Logprob), Bytes: byteInts(p)})
		}
		out = append(out, e)
	}
	return out
}

func byteInts(s string) []int {
	b := make([]int, len(s))
	for i := range len(s) {
		b[i] = int(s[i])
	}
	return b
}

func (res *genResult) usage() *usage {
	u := &usage{PromptTokens: res.promptTokens, CompletionTokens: len(res.ids), TotalTokens: res.promptTokens + len(res.ids)}
	u.PromptTokensDetails.CachedTokens = res.cachedTokens
	return u
}

func (res *genResult) timings() *timings {
	st := res.stats
	return &timings{CacheN: res.cachedTokens, CacheSource: res.source, PromptN: st.PromptTokens,
		PromptMS: ms(st.PromptTime), PredictedN: st.GeneratedTokens, PredictedMS: ms(st.DecodeTime),
		PredictedPerSec: st.DecodeTPS(), TTFTMS: ms(res.ttft)}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func (s *Server) newID(prefix string) string {
	return fmt.Sprintf("%s-%d-%d", prefix, time.Now().UnixNano(), s.reqSeq.Add(1))
}

// requestError writes the error a request failed with.
func (s *Server) requestError(w http.ResponseWriter, err error) {
	var br *badRequest
	switch {
	case errors.As(err, &br):
		writeError(w, http.StatusBadRequest, "invalid_request_error", br.param, br.msg)
	case errors.Is(err, errQueueFull):
		w.Header().Set("Retry-After", "1")
		writeError(w, http.StatusTooManyRequests, "rate_limit_error", "", err.Error()+"; retry later")
	case errors.Is(err, errDraining):
		writeError(w, http.StatusServiceUnavailable, "server_error", "", err.Error())
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		// The client is gone; nobody reads this.
	default:
		writeError(w, http.StatusInternalServerError, "server_error", "", err.Error())
	}
}

// run admits the request, generates and saves the state afterwards.
func (s *Server) run(ctx context.Context, g *genRequest) (*genResult, error) {
	release, err := s.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	// Cancel when the client leaves or the server stops waiting at shutdown.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(s.base, cancel)
	defer stop()
	res, err := s.genFn(ctx, g)
	s.afterRequest()
	return res, err
}

func (s *Server) handleChat(w http.ResponseWriter, r *http.Request) {
	var req chatRequest
	if err := decodeBody(r, &req); err != nil {
		s.requestError(w, err)
		return
	}
	g, o, thinking, err := s.prepareChat(&req)
	if err != nil {
		s.requestError(w, err)
		return
	}
	id, created := s.newID("chatcmpl"), time.Now().Unix()
	tools := len(o.Tools) > 0
	if !req.Stream {
		res, err := s.run(r.Context(), g)
		if err != nil {
			s.requestError(w, err)
			return
		}
		if res.finish == "cancelled" {
			return
		}
		pr := chat.Parse(res.text, thinking, tools)
		msg := &messageOut{Role: "assistant", ReasoningContent: pr.Reasoning}
		if pr.Content != "" || len(pr.ToolCalls) == 0 {
			msg.Content = &pr.Content
		}
		for _, c := range pr.ToolCalls {
			msg.ToolCalls = append(msg.ToolCalls, toolOut(c, id, nil))
		}
		finish := res.finish
		if len(pr.ToolCalls) > 0 && finish == "stop" {
			finish = "tool_calls"
		}
		ch := chatChoice{Message: msg, FinishReason: &finish}
		if g.logprobs {
			ch.Logprobs = &choiceLogprobs{Content: s.lpEntries(res.lps)}
		}
		writeJSON(w, http.StatusOK, chatResponse{ID: id, Object: "chat.completion", Created: created, Model: s.modelID,
			SystemFingerprint: "regolith", Choices: []chatChoice{ch}, Usage: res.usage(), Timings: res.timings()})
		return
	}
	sse := newSSE(w)
	chunk := func(delta *messageOut, lps []tokenLogprob, finish *string) bool {
		c := chatChoice{Delta: delta, FinishReason: finish}
		if g.logprobs && len(lps) > 0 {
			c.Logprobs = &choiceLogprobs{Content: s.lpEntries(lps)}
		}
		return sse.send(chatResponse{ID: id, Object: "chat.completion.chunk", Created: created, Model: s.modelID,
			SystemFingerprint: "regolith", Choices: []chatChoice{c}})
	}
	parser := chat.NewParser(thinking, tools)
	nCalls := 0
	sendDelta := func(d chat.Delta, lps []tokenLogprob) bool {
		if d.Empty() && len(lps) == 0 {
			return true
		}
		m := &messageOut{ReasoningContent: d.Reasoning}
		if d.Content != "" {
			m.Content = &d.Content
		}
		for _, c := range d.ToolCalls {
			i := nCalls
			nCalls++
			m.ToolCalls = append(m.ToolCalls, toolOut(c, id, &i))
		}
		return chunk(m, lps, nil)
	}
	started := false
	g.onText = func(text string, lps []tokenLogprob) bool {
		if !started {
			started = true
			empty := ""
			if !chunk(&messageOut{Role: "assistant", Content: &empty}, nil, nil) {
				return false
			}
		}
		return sendDelta(parser.Add(text), lps)
	}
	res, err := s.run(r.Context(), g)
	if err != nil {
		if !started {
			s.requestError(w, err)
		} else {
			sse.sendError(err)
		}
		return
	}
	if res.finish == "cancelled" {
		return
	}
	if !started {
		empty := ""
		chunk(&messageOut{Role: "assistant", Content: &empty}, nil, nil)
	}
	sendDelta(parser.Flush(), nil)
	finish := res.finish
	if nCalls > 0 && finish == "stop" {
		finish = "tool_calls"
	}
	chunk(&messageOut{}, nil, &finish)
	if req.StreamOptions != nil && req.StreamOptions.IncludeUsage {
		sse.send(chatResponse{ID: id, Object: "chat.completion.chunk", Created: created, Model: s.modelID,
			SystemFingerprint: "regolith", Choices: []chatChoice{}, Usage: res.usage(), Timings: res.timings()})
	}
	sse.done()
}

func toolOut(c chat.ToolCall, id string, index *int) toolCallOut {
	t := toolCallOut{Index: index, ID: fmt.Sprintf("%s-%s", id, c.ID), Type: "function"}
	t.Function.Name, t.Function.Arguments = c.Name, c.Arguments
	return t
}

// sse writes server-sent events.
type sse struct {
	w  http.ResponseWriter
	rc *http.ResponseController
	ok bool
}

func newSSE(w http.ResponseWriter) *sse {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	return &sse{w: w, rc: http.NewResponseController(w), ok: true}
}

func (e *sse) send(v any) bool {
	if !e.ok {
		return false
	}
	b, _ := json.Marshal(v)
	if _, err := fmt.Fprintf(e.w, "data: %s\n\n", b); err != nil {
		e.ok = false
		return false
	}
	if err := e.rc.Flush(); err != nil {
		e.ok = false
	}
	return e.ok
}

func (e *sse) sendError(err error) {
	var a apiError
	a.Error.Message, a.Error.Type = err.Error(), "server_error"
	e.send(a)
}

func (e *sse) done() {
	if e.ok {
		fmt.Fprint(e.w, "data: [DONE]\n\n")
		e.rc.Flush()
	}
}

// completionRequest is the body of POST /v1/completions.
type completionRequest struct {
	samplingFields
	Prompt   json.RawMessage `json:"prompt"`
	Logprobs *int            `json:"logprobs"`
	Echo     bool            `json:"echo"`
	Suffix   *string         `json:"suffix"`
}

type completionChoice struct {
	Index        int                 `json:"index"`
	Text         string              `json:"text"`
	Logprobs     *completionLogprobs `json:"logprobs"`
	FinishReason *string             `json:"finish_reason"`
}

type completionLogprobs struct {
	Tokens        []string             `json:"tokens"`
	TokenLogprobs []float64            `json:"token_logprobs"`
	TopLogprobs   []map[string]float64 `json:"top_logprobs"`
	TextOffset    []int                `json:"text_offset"`
}

type completionResponse struct {
	ID                string             `json:"id"`
	Object            string             `json:"object"`
	Created           int64              `json:"created"`
	Model             string             `json:"model"`
	SystemFingerprint string             `json:"system_fingerprint"`
	Choices           []completionChoice `json:"choices"`
	Usage             *usage             `json:"usage,omitempty"`
	Timings           *timings           `json:"timings,omitempty"`
}

func (s *Server) prepareCompletion(req *completionRequest) (*genRequest, error) {
	p, stop, n, err := s.sampling(&req.samplingFields, nil, 16)
	if err != nil {
		return nil, err
	}
	if req.Echo {
		return nil, bad("echo", "echo is not supported")
	}
	if req.Suffix != nil && *req.Suffix != "" {
		return nil, bad("suffix", "suffix is not supported")
	}
	top := 0
	if req.Logprobs != nil {
		if *req.Logprobs < 0 || *req.Logprobs > 20 {
			return nil, bad("logprobs", "logprobs must be between 0 and 20, got %d", *req.Logprobs)
		}
		top = *req.Logprobs
	}
	var prompt []int32
	var text string
	var texts []string
	var ids []int32
	switch {
	case len(req.Prompt) == 0 || string(req.Prompt) == "null":
		return nil, bad("prompt", "prompt is required")
	case json.Unmarshal(req.Prompt, &text) == nil:
		prompt = s.e.Tok.Encode(text, true, true)
	case json.Unmarshal(req.Prompt, &texts) == nil:
		if len(texts) != 1 {
			return nil, bad("prompt", "exactly one prompt per request")
		}
		prompt = s.e.Tok.Encode(texts[0], true, true)
	case json.Unmarshal(req.Prompt, &ids) == nil:
		for _, id := range ids {
			if id < 0 || int(id) >= s.e.Model.Cfg.NVocab {
				return nil, bad("prompt", "token id %d is outside the vocabulary of %d", id, s.e.Model.Cfg.NVocab)
			}
		}
		prompt = ids
	default:
		return nil, bad("prompt", "prompt must be a string, an array of one string, or an array of token ids")
	}
	if err := s.checkPrompt(prompt); err != nil {
		return nil, err
	}
	return &genRequest{prompt: prompt, maxTokens: n, params: p, stop: stop, logprobs: req.Logprobs != nil, topLogprobs: top}, nil
}

func (s *Server) completionLogprobs(lps []tokenLogprob) *completionLogprobs {
	c := &completionLogprobs{Tokens: []string{}, TokenLogprobs: []float64{}, TopLogprobs: []map[string]float64{}, TextOffset: []int{}}
	off := 0
	for _, t := range lps {
		c.Tokens = append(c.Tokens, t.Token)
		c.TokenLogprobs = append(c.TokenLogprobs, float64(t.Logprob))
		m := map[string]float64{}
		for _, x := range t.Top {
			m[s.e.Tok.Piece(x.ID)] = float64(x.Logprob)
		}
		c.TopLogprobs = append(c.TopLogprobs, m)
		c.TextOffset = append(c.TextOffset, off)
		off += len(t.Token)
	}
	return c
}

func (s *Server) handleCompletions(w http.ResponseWriter, r *http.Request) {
	var req completionRequest
	if err := decodeBody(r, &req); err != nil {
		s.requestError(w, err)
		return
	}
	g, err := s.prepareCompletion(&req)
	if err != nil {
		s.requestError(w, err)
		return
	}
	id, created := s.newID("cmpl"), time.Now().Unix()
	if !req.Stream {
		res, err := s.run(r.Context(), g)
		if err != nil {
			s.requestError(w, err)
			return
		}
		if res.finish == "cancelled" {
			return
		}
		ch := completionChoice{Text: res.text, FinishReason: &res.finish}
		if g.logprobs {
			ch.Logprobs = s.completionLogprobs(res.lps)
		}
		writeJSON(w, http.StatusOK, completionResponse{ID: id, Object: "text_completion", Created: created, Model: s.modelID,
			SystemFingerprint: "regolith", Choices: []completionChoice{ch}, Usage: res.usage(), Timings: res.timings()})
		return
	}
	sse := newSSE(w)
	send := func(text string, lps []tokenLogprob, finish *string, u *usage) bool {
		c := completionChoice{Text: text, FinishReason: finish}
		if g.logprobs && len(lps) > 0 {
			c.Logprobs = s.completionLogprobs(lps)
		}
		return sse.send(completionResponse{ID: id, Object: "text_completion", Created: created, Model: s.modelID,
			SystemFingerprint: "regolith", Choices: []completionChoice{c}, Usage: u})
	}
	g.onText = func(text string, lps []tokenLogprob) bool { return send(text, lps, nil, nil) }
	res, err := s.run(r.Context(), g)
	if err != nil {
		sse.sendError(err)
		return
	}
	if res.finish == "cancelled" {
		return
	}
	var u *usage
	if req.StreamOptions != nil && req.StreamOptions.IncludeUsage {
		u = res.usage()
	}
	send("", nil, &res.finish, u)
	sse.done()
}

func (s *Server) handleModels(w http.ResponseWriter, r *http.Request) {
	type modelEntry struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Created int64  `json:"created"`
		OwnedBy string `json:"owned_by"`
		Meta    any    `json:"meta,omitempty"`
	}
	c := s.e.Model.Cfg
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": []modelEntry{{ID: s.modelID, Object: "model",
		Created: time.Now().Unix(), OwnedBy: "regolith",
		Meta: map[string]any{"n_ctx": s.sess.Ctx(), "n_vocab": c.NVocab, "n_layer": c.NLayer, "n_expert": c.NExpert}}}})
}

func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request) {
	if s.draining.Load() {
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "shutting down"})
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}
