package llm

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"strings"
	"testing"
)

// catalog_models.go is generated (go generate ./llm, which needs Node): its
// header names the hash of the generator and its lock file, so a change to
// either without regenerating fails here.
func TestCatalogGeneratedFromItsInputs(t *testing.T) {
	h := sha256.New()
	for _, f := range []string{"gen/catalog.mjs", "gen/package-lock.json"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		h.Write(b)
	}
	gen, err := os.ReadFile("catalog_models.go")
	if err != nil {
		t.Fatal(err)
	}
	want := "// inputs sha256 " + hex.EncodeToString(h.Sum(nil))
	if !strings.Contains(string(gen), want+"\n") {
		t.Fatalf("catalog_models.go was not generated from gen/catalog.mjs and gen/package-lock.json as they are: run go generate ./llm")
	}
	if m, ok := lookupModel("claude-sonnet-4-5"); !ok || m.contextWindow != 200000 {
		t.Fatalf("claude-sonnet-4-5: %+v, %v", m, ok)
	}
}
