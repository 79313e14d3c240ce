package server

import (
	"io"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/regolith/regolith/defaultmodel"
	"github.com/regolith/regolith/engine"
	"github.com/regolith/regolith/internal/fixtures"
	"github.com/regolith/regolith/model"
)

var engines sync.Map // path → *engine.Engine, shared by the tests (the model is read-only)

func openEngine(t testing.TB, path string) *engine.Engine {
	t.Helper()
	if e, ok := engines.Load(path); ok {
		return e.(*engine.Engine)
	}
	e, err := engine.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	v, _ := engines.LoadOrStore(path, e)
	return v.(*engine.Engine)
}

// defaultPath is the embedded default model (gomoe, trained on Go source).
func defaultPath(t testing.TB) string {
	p, err := defaultmodel.Path()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// chatPath is the qwen3moe fixture, which carries Qwen3's chat template.
func chatPath(t testing.TB) string {
	return fixtures.Path(t, "models", "qwen3moe-small-q8_0.gguf")
}

func newSession(t testing.TB, e *engine.Engine, ctx int) *model.Session {
	t.Helper()
	s, err := model.NewSession(e.Model, model.Options{Ctx: ctx, Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// start serves a model on 127.0.0.1 (an ephemeral port) for the test's duration.
func start(t testing.TB, path string, cfg Config) (*Server, string) {
	t.Helper()
	e := openEngine(t, path)
	if cfg.Session == nil {
		cfg.Session = newSession(t, e, 1024)
	}
	cfg.Engine, cfg.ModelPath = e, path
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s.Handler())
	t.Cleanup(func() { hs.Close(); s.Close() })
	return s, hs.URL
}
