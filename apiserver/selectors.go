package apiserver

import (
	"github.com/skiff-dev/skiff/api/fields"
	"github.com/skiff-dev/skiff/api/labels"
)

func parseLabelSelector(s string) (labels.Selector, error) { return labels.Parse(s) }

func parseFieldSelector(s string) (fields.Selector, error) { return fields.Parse(s) }
