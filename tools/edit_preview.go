package tools

import (
	"strings"
)

// EditPreview is the diff an edit call would make to a file whose content
// is current: the same text its result's details.diff carries, made by the
// same code, so an approval prompt can show it before the call runs. The
// error is the edit's own (pi's texts) when the edits do not apply.
func EditPreview(current string, edits []EditReplacement, path string) (string, error) {
	raw := strings.TrimPrefix(current, utf8BOM)
	updated, err := applyEdits(raw, edits, path)
	if err != nil {
		return "", err
	}
	diff, _ := unifiedDiff(toLF(raw), toLF(updated))
	return diff, nil
}

// WriteDiff is the diff a write call would make to a file whose content is
// current ("" for a new file), in details.diff's format.
func WriteDiff(current, content string) string {
	diff, _ := unifiedDiff(toLF(strings.TrimPrefix(current, utf8BOM)), toLF(content))
	return diff
}
