//! The planning functions of the operators added through the operator
//! table (`acl-sys/operators.toml`) beyond the first set: each checks its C
//! arguments and builds the plan of the CANN operator whose kernel runs it.
