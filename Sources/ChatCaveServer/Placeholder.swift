// Placeholder: the ChatCaveServer module arrives with the ChatCave issue.
