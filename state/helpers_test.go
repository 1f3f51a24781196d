package state

import "github.com/google/go-cmp/cmp/cmpopts"

var cmpEmpty = cmpopts.EquateEmpty()
