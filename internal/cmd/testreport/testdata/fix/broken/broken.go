package broken

func F() int { return "not an int" }
