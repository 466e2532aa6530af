"""From chunks to an answer: the prompt (prompting), citations (citing), the reasoning/answer split
(thinking), typed answer events (builder) and the answer cache."""
