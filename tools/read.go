package tools

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"syscall"

	"github.com/durable-agents/agentloop/agent"
)

// ReadToolName is the read tool's name.
const ReadToolName = "read"

// Read limits beyond the shared DefaultMaxLines and DefaultMaxBytes.
const (
	// ReadMaxImageBytes is the largest image read attaches: its base64 form
	// (4/3 larger) must fit MaxResultBytes. pi resizes larger images; this
	// tool says how to make a smaller copy instead.
	ReadMaxImageBytes = 700 * 1024
	// ReadMaxFileBytes is the largest text file read loads.
	ReadMaxFileBytes = 100 * 1024 * 1024
	// binarySniffBytes is how far read, edit and grep look for a NUL byte,
	// git's test for a binary file.
	binarySniffBytes = 8000
)

//go:embed descriptions/read.md
var readDescription string

// ReadParams are read's arguments.
type ReadParams struct {
	Path   string `json:"path" description:"Path to the file to read (relative or absolute)"`
	Offset *int   `json:"offset,omitempty" description:"Line number to start reading from (1-indexed)"`
	Limit  *int   `json:"limit,omitempty" description:"Maximum number of lines to read"`
}

// NewReadTool returns the read tool: it reads text files with head
// truncation, and images as image blocks.
func NewReadTool(opts ReadOptions) Tool {
	data := map[string]any{"MaxLines": DefaultMaxLines, "MaxKB": DefaultMaxBytes / 1024}
	return New(readDefinition(ReadToolName, readDescription, ReadParams{}, data),
		func(ctx context.Context, call Call, p ReadParams) (agent.ToolResult, error) {
			return finish(read(ctx, opts, call, p))
		})
}

func read(ctx context.Context, opts ReadOptions, call Call, p ReadParams) (agent.ToolResult, error) {
	ws, err := opts.workspace(call)
	if err != nil {
		return agent.ToolResult{}, err
	}
	abs, err := ws.ResolveRead(p.Path)
	if err != nil {
		return agent.ToolResult{}, err
	}
	if err := aborted(ctx); err != nil {
		return agent.ToolResult{}, err
	}
	files, err := ws.tree(abs, true)
	if err != nil {
		return agent.ToolResult{}, nodeError(err, "access", abs)
	}
	defer files.close()
	// One open for everything read looks at, so the file checked is the
	// file read.
	f, info, err := files.openRegular(abs, p.Path)
	if err != nil {
		var errno syscall.Errno
		if errors.As(err, &errno) && errno == syscall.EACCES {
			return agent.ToolResult{}, nodeError(err, "open", abs)
		}
		return agent.ToolResult{}, nodeError(err, "access", abs)
	}
	defer f.Close()
	if info.IsDir() {
		return agent.ToolResult{}, fmt.Errorf("EISDIR: illegal operation on a directory, read")
	}
	head := make([]byte, 512)
	n, err := f.ReadAt(head, 0)
	if err != nil && err != io.EOF {
		return agent.ToolResult{}, nodeError(err, "open", abs)
	}
	head = head[:n]
	if mime := imageMime(head); mime != "" {
		return readImage(f, mime, info.Size())
	}
	if info.Size() > ReadMaxFileBytes {
		return agent.ToolResult{}, tooBig(p.Path, info.Size())
	}
	data, err := io.ReadAll(io.LimitReader(f, ReadMaxFileBytes+1))
	if err != nil {
		return agent.ToolResult{}, nodeError(err, "open", abs)
	}
	if len(data) > ReadMaxFileBytes { // it grew while read
		return agent.ToolResult{}, tooBig(p.Path, int64(len(data)))
	}
	if isBinary(data) {
		return agent.ToolResult{}, fmt.Errorf("Cannot read binary file %s (%s, not a supported image). Use bash (e.g. file or xxd | head) to inspect it.",
			p.Path, FormatSize(len(data)))
	}
	return readText(strings.ToValidUTF8(string(data), "\uFFFD"), p)
}

func tooBig(path string, size int64) error {
	return fmt.Errorf("File %s is %s; read loads files up to %s. Use bash (e.g. sed -n '1,%dp' %s) to view part of it.",
		path, FormatSize(int(size)), FormatSize(ReadMaxFileBytes), DefaultMaxLines, path)
}

// readText applies offset, limit and head truncation with pi's notices.
func readText(content string, p ReadParams) (agent.ToolResult, error) {
	lines := strings.Split(content, "\n")
	start := 0
	if p.Offset != nil && *p.Offset > 0 {
		start = *p.Offset - 1
	}
	if start >= len(lines) {
		return agent.ToolResult{}, fmt.Errorf("Offset %d is beyond end of file (%d lines total)", *p.Offset, len(lines))
	}
	end := len(lines)
	if p.Limit != nil {
		end = min(max(start+*p.Limit, start), len(lines))
	}
	tr := TruncateHead(strings.Join(lines[start:end], "\n"), DefaultMaxLines, DefaultMaxBytes)
	first := start + 1
	var text string
	var details any
	switch {
	case tr.FirstLineExceedsLimit:
		text = fmt.Sprintf("[Line %d is %s, exceeds %s limit. Use bash: sed -n '%dp' %s | head -c %d]",
			first, FormatSize(len(lines[start])), FormatSize(DefaultMaxBytes), first, p.Path, DefaultMaxBytes)
		details = map[string]any{"truncation": tr}
	case tr.Truncated:
		last := first + tr.OutputLines - 1
		limitNote := ""
		if tr.TruncatedBy == "bytes" {
			limitNote = fmt.Sprintf(" (%s limit)", FormatSize(DefaultMaxBytes))
		}
		text = tr.Content + fmt.Sprintf("\n\n[Showing lines %d-%d of %d%s. Use offset=%d to continue.]",
			first, last, len(lines), limitNote, last+1)
		details = map[string]any{"truncation": tr}
	case p.Limit != nil && end < len(lines):
		text = tr.Content + fmt.Sprintf("\n\n[%d more lines in file. Use offset=%d to continue.]", len(lines)-end, end+1)
	default:
		text = tr.Content
	}
	return agent.ToolResult{Content: []agent.Content{agent.Text(text)}, Details: detailsJSON(details)}, nil
}

// readImage attaches an image, or says how to shrink one that is too big.
func readImage(f *os.File, mime string, size int64) (agent.ToolResult, error) {
	note := fmt.Sprintf("Read image file [%s]", mime)
	if size > ReadMaxImageBytes {
		note += fmt.Sprintf("\n[Image omitted: %s exceeds the %s inline image limit. Use bash to make a smaller copy (e.g. convert in.png -resize 50%% out.jpg) and read that.]",
			FormatSize(int(size)), FormatSize(ReadMaxImageBytes))
		return agent.TextResult(note), nil
	}
	data, err := io.ReadAll(io.LimitReader(f, ReadMaxImageBytes+1))
	if err != nil {
		return agent.ToolResult{}, nodeError(err, "open", f.Name())
	}
	if len(data) > ReadMaxImageBytes { // it grew while read
		return readImage(f, mime, int64(len(data)))
	}
	return agent.ToolResult{Content: []agent.Content{
		agent.Text(note),
		agent.Image(base64.StdEncoding.EncodeToString(data), mime),
	}}, nil
}

// imageMime sniffs the image formats pi sends as attachments.
func imageMime(head []byte) string {
	switch m := http.DetectContentType(head); m {
	case "image/jpeg", "image/png", "image/gif", "image/webp":
		return m
	}
	return ""
}

// isBinary is git's test: a NUL byte near the start.
func isBinary(data []byte) bool {
	return bytes.IndexByte(data[:min(len(data), binarySniffBytes)], 0) >= 0
}
