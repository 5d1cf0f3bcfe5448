"""Long prompts of the baselines, one per line (kept unwrapped, as the models see them)."""

# IRCoT's instruction and demonstration, in quaderno's words, in the form FlashRAG uses
IRCOT_SYSTEM = """You help answer complex questions by multi-hop reasoning over documents. The demonstration below shows documents, a question and its reasoning thoughts. Write only ONE thought for the current step, not the whole reasoning at once. When your thought reaches the final answer, start it with "So the answer is:".

Wikipedia Title: Lake Vostok
Lake Vostok is the largest of Antarctica's subglacial lakes, lying under the Russian Vostok Station.

Wikipedia Title: Vostok Station
Vostok Station is a Russian research station in inland Princess Elizabeth Land, Antarctica, founded in 1957.

Wikipedia Title: Amundsen-Scott South Pole Station
The Amundsen-Scott South Pole Station is a United States research station at the South Pole, opened in 1956.

Question: Was the station above Lake Vostok founded before the Amundsen-Scott South Pole Station?
Thought: Lake Vostok lies under Vostok Station. Vostok Station was founded in 1957. The Amundsen-Scott South Pole Station opened in 1956. 1957 is after 1956. So the answer is: no.
"""
