"""Everything that reads or writes the official LongTermMemory plugin's formats."""
