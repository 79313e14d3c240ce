package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/regolith/regolith/internal/units"
	"github.com/regolith/regolith/server"
)

func init() {
	commands = append(commands, command{"serve", "OpenAI-compatible HTTP server (chat, completions, metrics, prompt cache)", runServe})
}

func runServe(args []string) error {
	fs := newFlags("serve", "[-m FILE.gguf] [--host 127.0.0.1] [--port 8080] [flags]",
		"Serves the model over an OpenAI-compatible HTTP API: POST /v1/chat/completions (stream, tools,\n"+
			"logprobs), POST /v1/completions, GET /v1/models, GET /health, GET /metrics (Prometheus), and\n"+
			"POST /slots/{0}?action=save|restore. One generation runs at a time; --max-queue more wait (429\n"+
			"beyond). The last request's state stays in RAM and the next request reuses the longest shared\n"+
			"token prefix (exact); with --cache-dir every request's state is also saved to disk and\n"+
			"restored for a later prompt that shares more of it. SIGINT/SIGTERM stop gracefully.")
	g := addGenFlags(fs)
	host := fs.String("host", "127.0.0.1", "address to listen on")
	port := fs.Int("port", 8080, "TCP port (0: any free port, printed on stderr)")
	maxQueue := fs.Int("max-queue", 16, "requests that may wait while one generates (beyond: 429)")
	cacheDir := fs.String("cache-dir", "", "directory of the disk prompt cache and slot files (default: none)")
	cacheSize := fs.String("cache-size", "10GiB", "with --cache-dir: size cap of the disk prompt cache (LRU eviction)")
	alias := fs.String("alias", "", "model id to report and accept (default: the file name without .gguf)")
	grace := fs.Duration("shutdown-grace", 30*time.Second, "on SIGINT/SIGTERM, how long in-flight requests may finish before they are cancelled")
	if help, err := parseFlags(fs, args); help || err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if *port < 0 || *port > 65535 {
		return fmt.Errorf("--port %d is not a TCP port", *port)
	}
	if *maxQueue < 0 {
		return fmt.Errorf("--max-queue must not be negative")
	}
	size, err := units.ParseBytes(*cacheSize)
	if err != nil {
		return fmt.Errorf("--cache-size: %w", err)
	}
	id := *alias
	if *g.model == "" && id == "" {
		id = "gomoe" // the embedded default model
	}
	e, s, st, err := g.open()
	if err != nil {
		return err
	}
	defer e.Close()
	defer st.Close()
	defer s.Close()
	defer g.trace.close() // --trace: finish the trace file
	mq := *maxQueue
	if mq == 0 {
		mq = -1 // none may wait
	}
	srv, err := server.New(server.Config{Engine: e, Session: s, Store: st, ModelPath: *g.model, ModelID: id,
		Chunk: *g.batch, MaxQueue: mq, CacheDir: *cacheDir, CacheSize: size})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(*host, strconv.Itoa(*port)))
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 30 * time.Second}
	fmt.Fprintf(os.Stderr, "regolith serve: model %s, context %d, listening on http://%s\n", srv.ModelID(), s.Ctx(), ln.Addr())

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	stop()
	fmt.Fprintf(os.Stderr, "regolith serve: shutting down (in-flight requests have %s)\n", *grace)
	srv.Drain()
	sctx, cancel := context.WithTimeout(context.Background(), *grace)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		// Out of patience: cancel generations, then wait for their handlers (and saves).
		srv.Close()
		sctx2, cancel2 := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel2()
		hs.Shutdown(sctx2)
	}
	srv.Close()
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
