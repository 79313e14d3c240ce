package units

import "testing"

func TestParseBytes(t *testing.T) {
	for s, want := range map[string]int64{"8GiB": 8 << 30, "8G": 8 << 30, "8GB": 8e9, "512MiB": 512 << 20,
		"1.5G": 3 << 29, "1000": 1000, " 2 kib ": 2048, "0": 0} {
		got, err := ParseBytes(s)
		if err != nil || got != want {
			t.Errorf("ParseBytes(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	for _, s := range []string{"", "-1G", "abc", "1e400", "NaN", "5 parsecs"} {
		if _, err := ParseBytes(s); err == nil {
			t.Errorf("ParseBytes(%q): no error", s)
		}
	}
}

func TestFormatBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1536: "1.50 KiB", 3 << 30: "3.00 GiB"} {
		if got := FormatBytes(n); got != want {
			t.Errorf("FormatBytes(%d) = %q, want %q", n, got, want)
		}
	}
}
