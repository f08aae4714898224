// Package jsjson writes JSON the way JavaScript's JSON.stringify does, so
// texts that pi builds with it (validation errors, echoed arguments,
// normalized traces, compaction prompts) come out byte for byte the same
// from Go: no HTML escaping, U+2028 and U+2029 unescaped, and numbers as
// JavaScript prints them (-0 as 0, 1e21 as 1e+21, 1e-7 as 1e-7).
//
// It also holds the string rules those texts depend on: the order
// JavaScript enumerates an object's keys in (Keys), and strings compared
// and measured in UTF-16 code units (CompareUTF16, LengthUTF16).
package jsjson
