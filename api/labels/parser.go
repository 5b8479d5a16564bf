package labels

import (
	"fmt"
	"strings"

	"github.com/skiff-dev/skiff/api/field"
)

// tokenKind is a lexical token of the selector grammar.
type tokenKind int

const (
	tokEnd tokenKind = iota
	tokIdentifier
	tokIn
	tokNotIn
	tokOpenPar
	tokClosedPar
	tokComma
	tokDoesNotExist // "!"
	tokEquals
	tokDoubleEquals
	tokNotEquals
	tokGreaterThan
	tokLessThan
)

type token struct {
	kind tokenKind
	lit  string
}

func isWhitespace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

func isSpecialSymbol(c byte) bool {
	switch c {
	case '=', '!', '(', ')', ',', '>', '<':
		return true
	}
	return false
}

// lex splits s into tokens, always ending with one tokEnd. Identifiers are
// maximal runs of bytes that are neither whitespace nor special symbols;
// "in" and "notin" are keywords. Special symbols are matched longest first
// ("==" and "!=" before "=" and "!"), as Kubernetes' lexer does. Every byte
// of s belongs to some token, so lexing never fails; bad identifiers are
// caught by key and value validation.
func lex(s string) []token {
	var toks []token
	i := 0
	for {
		for i < len(s) && isWhitespace(s[i]) {
			i++
		}
		if i == len(s) {
			return append(toks, token{kind: tokEnd})
		}
		c := s[i]
		if !isSpecialSymbol(c) {
			j := i
			for j < len(s) && !isWhitespace(s[j]) && !isSpecialSymbol(s[j]) {
				j++
			}
			lit := s[i:j]
			kind := tokIdentifier
			switch lit {
			case "in":
				kind = tokIn
			case "notin":
				kind = tokNotIn
			}
			toks = append(toks, token{kind: kind, lit: lit})
			i = j
			continue
		}
		if i+1 < len(s) && s[i+1] == '=' && (c == '=' || c == '!') {
			kind := tokDoubleEquals
			if c == '!' {
				kind = tokNotEquals
			}
			toks = append(toks, token{kind: kind, lit: s[i : i+2]})
			i += 2
			continue
		}
		var kind tokenKind
		switch c {
		case '=':
			kind = tokEquals
		case '!':
			kind = tokDoesNotExist
		case '(':
			kind = tokOpenPar
		case ')':
			kind = tokClosedPar
		case ',':
			kind = tokComma
		case '>':
			kind = tokGreaterThan
		case '<':
			kind = tokLessThan
		}
		toks = append(toks, token{kind: kind, lit: s[i : i+1]})
		i++
	}
}

// context tells the parser whether "in"/"notin" are keywords (after a key)
// or plain identifiers (as keys and values).
type context int

const (
	keyAndOperator context = iota
	values
)

// parser is a recursive-descent parser over the token list; its structure
// and error messages follow Kubernetes' labels.Parser.
type parser struct {
	toks []token
	pos  int
}

func (p *parser) lookahead(ctx context) (tokenKind, string) {
	t := p.toks[p.pos]
	if ctx == values && (t.kind == tokIn || t.kind == tokNotIn) {
		return tokIdentifier, t.lit
	}
	return t.kind, t.lit
}

func (p *parser) consume(ctx context) (tokenKind, string) {
	k, lit := p.lookahead(ctx)
	if p.pos < len(p.toks)-1 { // tokEnd is sticky
		p.pos++
	}
	return k, lit
}

func (p *parser) parse() (selector, error) {
	var reqs selector
	for {
		switch k, lit := p.lookahead(values); k {
		case tokIdentifier, tokDoesNotExist:
			r, err := p.parseRequirement()
			if err != nil {
				return nil, fmt.Errorf("unable to parse requirement: %w", err)
			}
			reqs = append(reqs, r)
			switch k, lit := p.consume(values); k {
			case tokEnd:
				return reqs, nil
			case tokComma:
				if k2, lit2 := p.lookahead(values); k2 != tokIdentifier && k2 != tokDoesNotExist {
					return nil, fmt.Errorf("found '%s', expected: identifier after ','", lit2)
				}
			default:
				return nil, fmt.Errorf("found '%s', expected: ',' or 'end of string'", lit)
			}
		case tokEnd:
			return reqs, nil
		default:
			return nil, fmt.Errorf("found '%s', expected: !, identifier, or 'end of string'", lit)
		}
	}
}

func (p *parser) parseRequirement() (requirement, error) {
	key, op, err := p.parseKeyAndInferOperator()
	if err != nil {
		return requirement{}, err
	}
	if op == opExists || op == opDoesNotExist {
		return p.build(key, op, nil)
	}
	op, err = p.parseOperator()
	if err != nil {
		return requirement{}, err
	}
	var vals []string
	switch op {
	case opIn, opNotIn:
		vals, err = p.parseValues()
	default:
		vals, err = p.parseExactValue()
	}
	if err != nil {
		return requirement{}, err
	}
	return p.build(key, op, vals)
}

func (p *parser) build(key string, op operator, vals []string) (requirement, error) {
	r, errs := newRequirement(key, op, vals, nil)
	if len(errs) != 0 {
		return requirement{}, errs
	}
	return r, nil
}

// parseKeyAndInferOperator reads "[!]key"; the operator is DoesNotExist
// after "!", Exists when the key ends the requirement, and empty otherwise
// (a binary operator follows).
func (p *parser) parseKeyAndInferOperator() (string, operator, error) {
	var op operator
	k, lit := p.consume(values)
	if k == tokDoesNotExist {
		op = opDoesNotExist
		k, lit = p.consume(values)
	}
	if k != tokIdentifier {
		return "", "", fmt.Errorf("found '%s', expected: identifier", lit)
	}
	if msgs := IsQualifiedName(lit); len(msgs) != 0 {
		// Kubernetes passes its (nil) parser path here, hence "<nil>".
		return "", "", field.Invalid(nil, lit, strings.Join(msgs, "; "))
	}
	if k, _ := p.lookahead(values); (k == tokEnd || k == tokComma) && op != opDoesNotExist {
		op = opExists
	}
	return lit, op, nil
}

func (p *parser) parseOperator() (operator, error) {
	switch k, lit := p.consume(keyAndOperator); k {
	case tokIn:
		return opIn, nil
	case tokNotIn:
		return opNotIn, nil
	case tokEquals:
		return opEquals, nil
	case tokDoubleEquals:
		return opDoubleEquals, nil
	case tokNotEquals:
		return opNotEquals, nil
	case tokGreaterThan:
		return opGreaterThan, nil
	case tokLessThan:
		return opLessThan, nil
	default:
		return "", fmt.Errorf("found '%s', expected: %s", lit, strings.Join(binaryOperators, ", "))
	}
}

// parseValues reads "(v1,v2,...)". Empty items are empty-string values:
// "()" is {""} and "(,a)" is {"", "a"}, as in Kubernetes.
func (p *parser) parseValues() ([]string, error) {
	if k, lit := p.consume(values); k != tokOpenPar {
		return nil, fmt.Errorf("found '%s' expected: '('", lit)
	}
	switch k, lit := p.lookahead(values); k {
	case tokIdentifier, tokComma:
		vals, err := p.parseIdentifiersList()
		if err != nil {
			return nil, err
		}
		if k, _ := p.consume(values); k != tokClosedPar {
			return nil, fmt.Errorf("found '%s', expected: ')'", lit)
		}
		return vals, nil
	case tokClosedPar:
		p.consume(values)
		return []string{""}, nil
	default:
		return nil, fmt.Errorf("found '%s', expected: ',', ')' or identifier", lit)
	}
}

// parseIdentifiersList reads the items of a value list up to (not
// including) the closing parenthesis.
func (p *parser) parseIdentifiersList() ([]string, error) {
	var vals []string
	for {
		switch k, lit := p.consume(values); k {
		case tokIdentifier:
			vals = append(vals, lit)
			switch k2, lit2 := p.lookahead(values); k2 {
			case tokComma:
				continue
			case tokClosedPar:
				return vals, nil
			default:
				return nil, fmt.Errorf("found '%s', expected: ',' or ')'", lit2)
			}
		case tokComma:
			if len(vals) == 0 {
				vals = append(vals, "") // "(,"
			}
			switch k2, _ := p.lookahead(values); k2 {
			case tokClosedPar:
				return append(vals, ""), nil // ",)"
			case tokComma:
				p.consume(values)
				vals = append(vals, "") // ",,"
			}
		default:
			return nil, fmt.Errorf("found '%s', expected: ',', or identifier", lit)
		}
	}
}

// parseExactValue reads the value after =, ==, !=, > or <; a missing value
// (end of string or ",") is the empty value.
func (p *parser) parseExactValue() ([]string, error) {
	if k, _ := p.lookahead(values); k == tokEnd || k == tokComma {
		return []string{""}, nil
	}
	k, lit := p.consume(values)
	if k == tokIdentifier {
		return []string{lit}, nil
	}
	return nil, fmt.Errorf("found '%s', expected: identifier", lit)
}
