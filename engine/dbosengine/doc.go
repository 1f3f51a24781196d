// Package dbosengine runs baton's durable work on DBOS Transact for Go
// (github.com/dbos-inc/dbos-transact-golang) over PostgreSQL: the workflow
// and step records live in the database, so work survives the process that
// started it and can be taken by any process that reaches the database.
package dbosengine
